// The gridkeeper console: a Preact single-page application served under /console/, speaking only the public API.
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { post, session, signOut } from './api.ts';
import { Link, Loading } from './components.tsx';
import { match, navigate, useLocation } from './router.ts';
import { Login } from './pages/login.tsx';
import { Devices } from './pages/devices.tsx';
import { DevicePage } from './pages/device.tsx';
import { Roles } from './pages/roles.tsx';
import { Licenses } from './pages/licenses.tsx';
import { Profile } from './pages/profile.tsx';
import { Operations } from './pages/operations.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { Alarms } from './pages/alarms.tsx';
import type { Member } from './types.ts';
import type { Me } from './types.ts';

const ROOT_ROLE_ID = 1;


function useSignedIn(): boolean {
  const [signedIn, setSignedIn] = useState(session.signedIn);
  useEffect(() => session.subscribe(() => setSignedIn(session.signedIn)), []);
  return signedIn;
}

function App() {
  const signedIn = useSignedIn();
  const [me, setMe] = useState<Me | undefined>();
  useEffect(() => {
    if (!signedIn) { setMe(undefined); return; }
    const email = session.email ?? '';
    // Root membership decides whether the operations and license creation screens are offered (the API decides anyway).
    // `*` (every role visible to the user) rather than the root role's id: that one is a 404 for anyone outside it
    post<{ member: Member[] }>('/v1/role/*/member/query', { filter: { roleId: [ROOT_ROLE_ID], userEmail: [email] } })
      .then((r) => setMe({ email, isRoot: r.member.length > 0 }), () => setMe({ email, isRoot: false }));
  }, [signedIn]);
  if (!signedIn) return <Login />;
  if (!me) return <main id="main" class="center"><Loading /></main>;
  return <Shell me={me} />;
}

const NAV: { href: string; label: string; root?: boolean }[] = [
  { href: '/devices', label: 'Devices' },
  { href: '/alarms', label: 'Alarms' },
  { href: '/roles', label: 'Roles' },
  { href: '/licenses', label: 'Licenses' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/operations', label: 'Operations', root: true },
  { href: '/profile', label: 'Profile' },
];

function Shell({ me }: { me: Me }) {
  const { path } = useLocation();
  useEffect(() => { if (path === '/') navigate('/devices', true); }, [path]);
  let page;
  let params: Record<string, string> | undefined;
  if ((params = match('/devices/:id', path))) page = <DevicePage id={Number(params.id)} />;
  else if (match('/devices', path)) page = <Devices />;
  else if ((params = match('/roles/:id', path))) page = <Roles selected={Number(params.id)} />;
  else if (match('/roles', path)) page = <Roles />;
  else if (match('/licenses', path)) page = <Licenses me={me} />;
  else if (match('/webhooks', path)) page = <Webhooks />;
  else if (match('/alarms', path)) page = <Alarms />;
  else if (match('/operations', path)) page = <Operations />;
  else if (match('/profile', path)) page = <Profile />;
  else if (path === '/') page = <Loading />;
  else page = <div class="card"><h1>Not found</h1><p>No console page at {path}.</p></div>;
  useEffect(() => { document.getElementById('main')?.focus({ preventScroll: true }); }, [path]);
  return (
    <div class="layout">
      <a class="skip" href="#main">Skip to content</a>
      <nav class="sidebar" aria-label="Main">
        <div class="brand"><span class="logo" aria-hidden="true">◆</span> gridkeeper</div>
        <ul>
          {NAV.filter((n) => !n.root || me.isRoot).map((n) => (
            <li key={n.href}>
              <Link href={n.href} aria-current={path.startsWith(n.href) ? 'page' : undefined}>{n.label}</Link>
            </li>
          ))}
          <li><a href="/docs">API reference</a></li>
        </ul>
      </nav>
      <div class="content">
        <header class="topbar">
          <span class="muted">Signed in as <strong>{me.email}</strong>{me.isRoot && <span class="chip">root</span>}</span>
          <button type="button" onClick={() => { void signOut().then(() => navigate('/', true)); }}>Sign out</button>
        </header>
        <main id="main" tabIndex={-1}>{page}</main>
      </div>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
