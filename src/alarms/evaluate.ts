// The alarm state machine of one (rule, device), pure: points in (by point time), transitions out. The service
// stores the state between calls (alarm_states), so evaluation resumes after a restart and on any node.
//
// Threshold rules: a point breaches when above (below) the threshold; it has recovered when at or below (at or above)
// the threshold minus (plus) the hysteresis. A breach raises once it has lasted holdMs (at the first point that shows
// it); a recovery clears once it has lasted clearHoldMs. A value between the two lines keeps the current phase.
// A point not newer than the last evaluated one is ignored: late and out-of-order points cannot flap an alarm.
// A hold also ends on the timer (checkHold): a breach that lasts while no point comes raises once the hold is over.
// No-data rules: a point newer than the last one seen clears an active alarm when it is not itself overdue; the
// timer raises when the newest point (or the start of watching) is older than noDataMs.


export const SEVERITIES = ['critical', 'major', 'minor', 'warning'] as const;
export type Severity = (typeof SEVERITIES)[number];

export type Phase = 'normal' | 'pending' | 'active' | 'clearing' | 'suppressed';
export type RuleKind = 'above' | 'below' | 'noData';

export interface RuleSpec {
  kind: RuleKind;
  threshold: number | null;
  hysteresis: number;
  holdMs: number;
  clearHoldMs: number;
  noDataMs: number | null;
}

export interface AlarmState {
  phase: Phase;
  /** point time the pending breach or the clearing recovery began */
  since: number | null;
  /** value of the point that began the pending breach (the alarm's raising value) */
  sinceValue: number | null;
  /** point time of the newest point evaluated */
  lastAt: number | null;
  lastValue: number | null;
}

export type Transition =
  | { kind: 'raise'; startAt: number; value: number | null }
  | { kind: 'clear'; endAt: number; value: number | null };

export const NORMAL: AlarmState = { phase: 'normal', since: null, sinceValue: null, lastAt: null, lastValue: null };

export function breaches(rule: RuleSpec, value: number): boolean {
  if (rule.threshold === null) return false;
  return rule.kind === 'above' ? value > rule.threshold : rule.kind === 'below' ? value < rule.threshold : false;
}

export function recovered(rule: RuleSpec, value: number): boolean {
  if (rule.threshold === null) return true;
  return rule.kind === 'above' ? value <= rule.threshold - rule.hysteresis : value >= rule.threshold + rule.hysteresis;
}

/**
 * One point of a threshold rule. `state` is not changed; the new state and the transition (if any) are returned.
 * NaN is not a measurement: it is ignored like a late point.
 */
export function stepThreshold(rule: RuleSpec, state: AlarmState, t: number, value: number): { state: AlarmState; transition?: Transition } {
  if ((state.lastAt !== null && t <= state.lastAt) || Number.isNaN(value)) return { state };
  const next: AlarmState = { ...state, lastAt: t, lastValue: value };
  const breach = breaches(rule, value);
  const ok = recovered(rule, value);
  switch (state.phase) {
    case 'normal':
      if (!breach) return { state: next };
      if (rule.holdMs === 0) return { state: { ...next, phase: 'active', since: null, sinceValue: null }, transition: { kind: 'raise', startAt: t, value } };
      return { state: { ...next, phase: 'pending', since: t, sinceValue: value } };
    case 'pending':
      if (!breach) return { state: { ...next, phase: 'normal', since: null, sinceValue: null } };
      if (t - state.since! >= rule.holdMs) {
        return { state: { ...next, phase: 'active', since: null, sinceValue: null }, transition: { kind: 'raise', startAt: state.since!, value: state.sinceValue } };
      }
      return { state: next };
    case 'active':
      if (!ok) return { state: next };
      if (rule.clearHoldMs === 0) return { state: { ...next, phase: 'normal', since: null, sinceValue: null }, transition: { kind: 'clear', endAt: t, value } };
      return { state: { ...next, phase: 'clearing', since: t, sinceValue: null } };
    case 'clearing':
      if (!ok) return { state: { ...next, phase: 'active', since: null } };
      if (t - state.since! >= rule.clearHoldMs) {
        return { state: { ...next, phase: 'normal', since: null, sinceValue: null }, transition: { kind: 'clear', endAt: state.since!, value } };
      }
      return { state: next };
    case 'suppressed':
      // cleared by hand while breached: armed again once the value has recovered
      return { state: ok ? { ...next, phase: 'normal', since: null, sinceValue: null } : next };
  }
}

/** One point of a no-data rule, arriving at `now`. */
export function stepNoData(rule: RuleSpec, state: AlarmState, t: number, now: number): { state: AlarmState; transition?: Transition } {
  if (state.lastAt !== null && t <= state.lastAt) return { state };
  const next: AlarmState = { ...state, lastAt: t };
  const overdue = now - t >= (rule.noDataMs ?? Infinity);
  if ((state.phase === 'active' || state.phase === 'suppressed') && !overdue) {
    return { state: { ...next, phase: 'normal' }, ...(state.phase === 'active' ? { transition: { kind: 'clear' as const, endAt: t, value: null } } : {}) };
  }
  return { state: next };
}

/** The timer's check of a no-data rule at `now`; `watchedFrom`: when watching began (no point seen yet). */
export function checkNoData(rule: RuleSpec, state: AlarmState, now: number, watchedFrom: number): { state: AlarmState; transition?: Transition } {
  if (state.phase !== 'normal') return { state };
  const newest = state.lastAt ?? watchedFrom;
  if (now - newest < (rule.noDataMs ?? Infinity)) return { state };
  return { state: { ...state, phase: 'active' }, transition: { kind: 'raise', startAt: newest, value: null } };
}

/**
 * The timer's check of a threshold rule's hold at `now`: a breach that began at `since` and that no point has ended
 * raises once it has lasted holdMs; a recovery clears once it has lasted clearHoldMs. The points decide as before
 * when they come; the timer only keeps a quiet sensor from holding the decision back.
 */
export function checkHold(rule: RuleSpec, state: AlarmState, now: number): { state: AlarmState; transition?: Transition } {
  if (rule.kind === 'noData' || state.since === null) return { state };
  if (state.phase === 'pending' && rule.holdMs > 0 && now - state.since >= rule.holdMs) {
    return { state: { ...state, phase: 'active', since: null, sinceValue: null }, transition: { kind: 'raise', startAt: state.since, value: state.sinceValue } };
  }
  if (state.phase === 'clearing' && rule.clearHoldMs > 0 && now - state.since >= rule.clearHoldMs) {
    return { state: { ...state, phase: 'normal', since: null, sinceValue: null }, transition: { kind: 'clear', endAt: state.since, value: state.lastValue } };
  }
  return { state };
}

/** A manual clear of an active alarm: a threshold rule still breached waits for recovery before it may raise again. */
export function clearedByHand(rule: RuleSpec, state: AlarmState): AlarmState {
  if (rule.kind === 'noData') return { ...state, phase: 'suppressed', since: null, sinceValue: null };
  const stillBreached = state.lastValue !== null && !recovered(rule, state.lastValue);
  return { ...state, phase: stillBreached ? 'suppressed' : 'normal', since: null, sinceValue: null };
}
