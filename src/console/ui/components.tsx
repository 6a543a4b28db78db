// Shared pieces: links, form fields, error notes, confirmation dialogs, the six rights flags.
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.ts';
import { BASE, navigate } from './router.ts';

export const RIGHTS = ['roleManagement', 'userManagement', 'viewManagement', 'deviceManagement', 'reportManagement', 'alarmManagement'] as const;
export type Right = (typeof RIGHTS)[number];
export type Flags = Record<Right, boolean>;
export const RIGHT_LABELS: Record<Right, string> = {
  roleManagement: 'Roles', userManagement: 'Users', viewManagement: 'Views',
  deviceManagement: 'Devices', reportManagement: 'Reports', alarmManagement: 'Alarms',
};
export const noFlags = (): Flags => ({ roleManagement: false, userManagement: false, viewManagement: false, deviceManagement: false, reportManagement: false, alarmManagement: false });

export function Link({ href, children, ...rest }: { href: string; children: ComponentChildren } & JSX.HTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent) => {
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(href);
  };
  return <a href={BASE + href} onClick={onClick} {...rest}>{children}</a>;
}

let fieldIds = 0;
export function useId(prefix: string): string {
  const ref = useRef<string>();
  ref.current ??= `${prefix}-${++fieldIds}`;
  return ref.current;
}

/** A labelled input; `hint` is linked with aria-describedby. */
export function Field({ label, hint, children, id }: { label: string; hint?: string; id: string; children: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint && <small id={`${id}-hint`} class="hint">{hint}</small>}
    </div>
  );
}

export function TextInput({ label, value, onInput, type = 'text', hint, required, autoComplete, name, readOnly, placeholder, inputMode }: {
  label: string; value: string; onInput: (v: string) => void; type?: string; hint?: string; required?: boolean;
  autoComplete?: string; name?: string; readOnly?: boolean; placeholder?: string; inputMode?: 'numeric' | 'text' | 'email';
}) {
  const id = useId('in');
  return (
    <Field label={label} hint={hint} id={id}>
      <input id={id} name={name} type={type} value={value} required={required} autocomplete={autoComplete} readOnly={readOnly}
        placeholder={placeholder} inputMode={inputMode} aria-describedby={hint ? `${id}-hint` : undefined}
        onInput={(e) => onInput((e.target as HTMLInputElement).value)} />
    </Field>
  );
}

export function Select({ label, value, onChange, options, hint }: {
  label: string; value: string; onChange: (v: string) => void; options: [string, string][]; hint?: string;
}) {
  const id = useId('sel');
  return (
    <Field label={label} hint={hint} id={id}>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)} aria-describedby={hint ? `${id}-hint` : undefined}>
        {options.map(([v, text]) => <option key={v} value={v}>{text}</option>)}
      </select>
    </Field>
  );
}

export function Check({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
      <span>{label}</span>
    </label>
  );
}

export function FlagsEditor({ legend, value, onChange }: { legend: string; value: Flags; onChange: (f: Flags) => void }) {
  return (
    <fieldset class="flags">
      <legend>{legend}</legend>
      {RIGHTS.map((r) => <Check key={r} label={RIGHT_LABELS[r]} checked={value[r]} onChange={(on) => onChange({ ...value, [r]: on })} />)}
    </fieldset>
  );
}

export function FlagChips({ flags }: { flags: Partial<Flags> }) {
  const on = RIGHTS.filter((r) => flags[r]);
  if (on.length === 0) return <span class="chip muted">no rights</span>;
  return <span class="chips">{on.map((r) => <span key={r} class="chip">{RIGHT_LABELS[r]}</span>)}</span>;
}

/** The API's own message, the code, and what it was about; Retry-After spelled out for 429. */
export function ErrorNote({ error, context }: { error: unknown; context?: string }) {
  if (!error) return null;
  const failure = error instanceof ApiFailure ? error : undefined;
  const retry = failure?.body.retryAfter ?? failure?.headers.get('retry-after');
  return (
    <div class="error" role="alert">
      {context && <strong>{context}: </strong>}
      <span>{failure ? failure.body.message : String((error as Error).message ?? error)}</span>
      {failure && <span class="code"> ({failure.status} {failure.code})</span>}
      {retry !== undefined && retry !== null && <span> — try again in {String(retry)} s.</span>}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return <div class="notice" role="status">{children}</div>;
}

/** Runs an async action, keeping its error and a busy flag; the form's input is never reset on failure. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): {
  run: (...args: A) => Promise<boolean>; busy: boolean; error: unknown; clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn(...args);
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, [fn]);
  return { run, busy, error, clear: () => setError(undefined) };
}

/** Loads data on mount and when `deps` change; `reload()` fetches again. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then((data) => { if (live) setState({ data, loading: false }); }, (error: unknown) => { if (live) setState({ error, loading: false }); });
    return () => { live = false; };
  }, [...deps, tick]);
  return { data: state.data, error: state.error, loading: state.loading, reload: () => setTick((n) => n + 1) };
}

export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId('dlg');
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={id} onClose={onClose}>
      <h2 id={id}>{title}</h2>
      {open && children}
    </dialog>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head"><h2>{title}</h2>{actions && <div class="actions">{actions}</div>}</header>
      {children}
    </section>
  );
}

export function Loading() {
  return <p class="muted" role="status">Loading…</p>;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}
