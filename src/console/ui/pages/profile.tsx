// The signed-in user: password, two-factor authentication (QR code drawn locally, recovery codes), sign-out.
import { useState } from 'preact/hooks';
import { ApiFailure, api, del, get, post, put, session } from '../api.ts';
import { ErrorNote, Loading, Notice, Section, TextInput, useAction, useLoad } from '../components.tsx';
import { QrCode } from '../qr.tsx';

interface TwoFactorStatus { enabled: boolean; totp: { completedAt: string | null }; recoveryCodes: { completedAt: string | null; remaining: number } }

/** A sudo token from the TOTP code (needed to turn 2FA off or to regenerate recovery codes). */
async function sudoFrom(code: string): Promise<void> {
  if (session.sudo) return;
  await session.freshAccess(); // the TOTP step wants an access token at most 5 minutes old
  const r = await api<{ sudoToken: string }>('POST', '/user/2fa/totp/authenticate', { body: { totp: code.trim() } });
  session.setSudo(r.data.sudoToken);
}

export function Profile() {
  const status = useLoad(() => get<TwoFactorStatus>('/user/2fa'), []);
  return (
    <div>
      <div class="page-head"><h1>Profile</h1><span class="muted">{session.email}</span></div>
      <div class="two">
        <Section title="Two-factor authentication">
          <ErrorNote error={status.error} context="2FA status" />
          {!status.data ? <Loading /> : status.data.enabled
            ? <TwoFactorOn status={status.data} onChange={status.reload} />
            : <TwoFactorSetup onChange={status.reload} />}
        </Section>
        <ChangePassword />
      </div>
    </div>
  );
}

function TwoFactorSetup({ onChange }: { onChange: () => void }) {
  const [setup, setSetup] = useState<{ secret: string; otpauthUrl: string } | undefined>();
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | undefined>();
  const begin = useAction(async () => {
    await session.freshAccess(); // setup without 2FA accepts an access token at most 5 minutes old
    setSetup(await post<{ secret: string; otpauthUrl: string }>('/user/2fa/totp/setup', undefined, { token: 'sudo' }));
  });
  const enable = useAction(async () => {
    const r = await post<{ recoveryCodes: string[] }>('/user/2fa/totp/enable', { totp: code.trim() });
    setCodes(r.recoveryCodes);
  });
  if (codes) return <RecoveryCodes codes={codes} onDone={onChange} />;
  if (!setup) return (
    <div>
      <p><span class="badge">off</span> Signing in needs only your password.</p>
      <ErrorNote error={begin.error} context="Setting up 2FA" />
      <button type="button" class="primary" disabled={begin.busy} onClick={() => void begin.run()}>Turn on two-factor authentication</button>
    </div>
  );
  return (
    <form onSubmit={(e) => { e.preventDefault(); void enable.run(); }}>
      <p>Scan this code with an authenticator app, then enter the 6-digit code it shows.</p>
      <div class="qr-box">
        <QrCode text={setup.otpauthUrl} label="QR code of the authenticator secret" />
        <div>
          <p class="small muted">Or type the secret by hand:</p>
          <p class="mono secret" data-testid="totp-secret">{setup.secret}</p>
        </div>
      </div>
      <TextInput label="Code from the app" value={code} onInput={setCode} required inputMode="numeric" autoComplete="one-time-code" name="totp" />
      <ErrorNote error={enable.error} context="Enabling 2FA" />
      <div class="row end">
        <button type="button" onClick={() => setSetup(undefined)}>Cancel</button>
        <button type="submit" class="primary" disabled={enable.busy}>Enable</button>
      </div>
    </form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div>
      <Notice>Two-factor authentication is on. Save these recovery codes somewhere safe: each one signs you in once if you lose your phone. They are not shown again.</Notice>
      <ol class="codes mono" aria-label="Recovery codes">{codes.map((c) => <li key={c}>{c}</li>)}</ol>
      <div class="row end">
        <button type="button" onClick={() => { void navigator.clipboard?.writeText(codes.join('\n')).then(() => setCopied(true), () => undefined); }}>{copied ? 'Copied' : 'Copy codes'}</button>
        <button type="button" class="primary" onClick={onDone}>I have saved them</button>
      </div>
    </div>
  );
}

function TwoFactorOn({ status, onChange }: { status: TwoFactorStatus; onChange: () => void }) {
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | undefined>();
  const off = useAction(async () => {
    await sudoFrom(code);
    await del('/user/2fa', { token: 'sudo' });
    onChange();
  });
  const regenerate = useAction(async () => {
    await sudoFrom(code);
    setCodes((await post<{ recoveryCodes: string[] }>('/user/2fa/recovery-code/regenerate', undefined, { token: 'sudo' })).recoveryCodes);
  });
  if (codes) return <RecoveryCodes codes={codes} onDone={() => { setCodes(undefined); onChange(); }} />;
  return (
    <div>
      <p><span class="badge ok">on</span> since {status.totp.completedAt ? new Date(status.totp.completedAt).toLocaleString() : '—'} · {status.recoveryCodes.remaining} recovery codes left</p>
      <form onSubmit={(e) => e.preventDefault()}>
        {!session.sudo && <TextInput label="Current code from your app" value={code} onInput={setCode} inputMode="numeric" autoComplete="one-time-code" hint="Changing 2FA asks for the second factor again." />}
        <ErrorNote error={off.error ?? regenerate.error} context="2FA" />
        <div class="row end">
          <button type="button" disabled={regenerate.busy} onClick={() => void regenerate.run()}>New recovery codes</button>
          <button type="button" class="danger" disabled={off.busy} onClick={() => void off.run()}>Turn off 2FA</button>
        </div>
      </form>
    </div>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const change = useAction(async () => {
    if (next !== again) throw new Error('the two new passwords differ');
    await put('/user/password', { currentPassword: current, newPassword: next });
    setDone(true);
    // every refresh token of the user is revoked: this session ends too
    setTimeout(() => session.clear(), 1500);
  });
  return (
    <Section title="Password">
      <form onSubmit={(e) => { e.preventDefault(); void change.run(); }}>
        <input type="text" name="username" autocomplete="username" value={session.email ?? ''} hidden readOnly />
        <TextInput label="Current password" type="password" value={current} onInput={setCurrent} required autoComplete="current-password" />
        <TextInput label="New password" type="password" value={next} onInput={setNext} required autoComplete="new-password" hint="At least 10 characters." />
        <TextInput label="New password again" type="password" value={again} onInput={setAgain} required autoComplete="new-password" />
        <ErrorNote error={change.error} context="Changing the password" />
        {done && <Notice>Password changed. Every session is signed out; sign in again with the new password.</Notice>}
        <div class="row end"><button type="submit" class="primary" disabled={change.busy}>Change password</button></div>
      </form>
    </Section>
  );
}
