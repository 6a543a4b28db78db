// A small history-API router: every console page lives under /console/, the server answers each with the same HTML.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';
const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  const url = path.startsWith(BASE) ? path : BASE + path;
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  for (const fn of listeners) fn();
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => { for (const fn of listeners) fn(); });

/** The current path below /console, e.g. "/devices/12", and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, force] = useState(0);
  useEffect(() => {
    const fn = () => force((n) => n + 1);
    listeners.add(fn);
    return () => { listeners.delete(fn); };
  }, []);
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(location.search) };
}

/** Matches "/devices/:id" against a path; returns the parameters or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return undefined;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return undefined;
  }
  return out;
}
