-- Authentication: 2FA state, recovery codes, revoked refresh tokens, throttles. (filled by the auth work)
SELECT 1;
