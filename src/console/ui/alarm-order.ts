// The order of the console's alarm lists: active before cleared, then by severity, then newest first.
export type Severity = 'critical' | 'major' | 'minor' | 'warning';
export interface Ordered { id: number; severity: Severity; state: string }

const SEVERITY_ORDER: Record<Severity, number> = { critical: 0, major: 1, minor: 2, warning: 3 };

export function alarmOrder(a: Ordered, b: Ordered): number {
  const active = (x: Ordered) => (x.state.startsWith('active') ? 0 : 1);
  return active(a) - active(b) || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.id - a.id;
}
