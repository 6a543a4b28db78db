// Sign in: e-mail and password, then the TOTP code (or a recovery code) when 2FA is on.
import { useState } from 'preact/hooks';
import { ApiFailure, api, session } from '../api.ts';
import { ErrorNote, TextInput, useAction } from '../components.tsx';

interface TwoFactorTokens { accessToken: string; refreshToken: string; sudoToken: string }

export function Login() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [partial, setPartial] = useState<string | undefined>();
  const [useRecovery, setUseRecovery] = useState(false);
  const [code, setCode] = useState('');

  const signIn = useAction(async () => {
    try {
      const res = await api<string>('POST', '/auth/login', { body: { username: email, password }, token: 'none' });
      session.start(res.data, email.trim());
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'TWO_FACTOR_REQUIRED' && typeof err.body.partialAuthToken === 'string') {
        setPartial(err.body.partialAuthToken);
        return;
      }
      throw err;
    }
  });

  const secondFactor = useAction(async () => {
    const path = useRecovery ? '/user/2fa/recovery-code/authenticate' : '/user/2fa/totp/authenticate';
    const body = useRecovery ? { recoveryCode: code.trim() } : { totp: code.trim() };
    const res = await api<TwoFactorTokens>('POST', path, { body, token: { bearer: partial! } });
    session.start(res.data.refreshToken, email.trim(), res.data.accessToken, res.data.sudoToken);
  });

  return (
    <main class="login" id="main">
      <div class="login-card">
        <div class="brand brand-lg"><span class="logo" aria-hidden="true">◆</span> gridkeeper</div>
        {!partial ? (
          <form onSubmit={(e) => { e.preventDefault(); void signIn.run(); }} aria-labelledby="signin-title">
            <h1 id="signin-title">Sign in</h1>
            <TextInput label="E-mail" type="email" value={email} onInput={setEmail} required autoComplete="username" name="email" />
            <TextInput label="Password" type="password" value={password} onInput={setPassword} required autoComplete="current-password" name="password" />
            <ErrorNote error={signIn.error} context="Sign in" />
            <button class="primary wide" type="submit" disabled={signIn.busy}>{signIn.busy ? 'Signing in…' : 'Sign in'}</button>
          </form>
        ) : (
          <form onSubmit={(e) => { e.preventDefault(); void secondFactor.run(); }} aria-labelledby="tfa-title">
            <h1 id="tfa-title">Two-factor authentication</h1>
            <p class="muted">{useRecovery ? 'Enter one of your saved recovery codes. Each code works once.' : 'Enter the 6-digit code from your authenticator app.'}</p>
            {useRecovery
              ? <TextInput label="Recovery code" value={code} onInput={setCode} required autoComplete="one-time-code" name="recovery" />
              : <TextInput label="Authentication code" value={code} onInput={setCode} required autoComplete="one-time-code" name="totp" inputMode="numeric" />}
            <ErrorNote error={secondFactor.error} context="Second factor" />
            <button class="primary wide" type="submit" disabled={secondFactor.busy}>Verify</button>
            <div class="row between">
              <button type="button" class="link" onClick={() => { setUseRecovery(!useRecovery); setCode(''); secondFactor.clear(); }}>
                {useRecovery ? 'Use the authenticator app instead' : 'Use a recovery code instead'}
              </button>
              <button type="button" class="link" onClick={() => { setPartial(undefined); setCode(''); }}>Start over</button>
            </div>
          </form>
        )}
      </div>
      <p class="login-foot muted">API reference: <a href="/docs">/docs</a></p>
    </main>
  );
}
