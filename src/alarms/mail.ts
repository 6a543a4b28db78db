// The alarm e-mail in English, Dutch, French and German (the recipient's language as the rule names it; else English),
// with a link to the alarm in the console.
import { mailLanguage, type MailLanguage } from '../auth/reset-mail.ts';
import type { AlarmRow } from './alarms.store.ts';

type What = 'raised' | 'acknowledged' | 'cleared';

const WORDS: Record<MailLanguage, { what: Record<What, string>; severity: Record<string, string>; device: string; value: string; since: string; open: string }> = {
  en: {
    what: { raised: 'Alarm raised', acknowledged: 'Alarm acknowledged', cleared: 'Alarm cleared' },
    severity: { critical: 'critical', major: 'major', minor: 'minor', warning: 'warning' },
    device: 'Device', value: 'Value', since: 'Since', open: 'Open it in the console:',
  },
  nl: {
    what: { raised: 'Alarm gestart', acknowledged: 'Alarm bevestigd', cleared: 'Alarm opgeheven' },
    severity: { critical: 'kritiek', major: 'ernstig', minor: 'gering', warning: 'waarschuwing' },
    device: 'Toestel', value: 'Waarde', since: 'Sinds', open: 'Open het in de console:',
  },
  fr: {
    what: { raised: 'Alarme déclenchée', acknowledged: 'Alarme acquittée', cleared: 'Alarme levée' },
    severity: { critical: 'critique', major: 'majeure', minor: 'mineure', warning: 'avertissement' },
    device: 'Appareil', value: 'Valeur', since: 'Depuis', open: 'Ouvrez-la dans la console :',
  },
  de: {
    what: { raised: 'Alarm ausgelöst', acknowledged: 'Alarm quittiert', cleared: 'Alarm aufgehoben' },
    severity: { critical: 'kritisch', major: 'schwer', minor: 'gering', warning: 'Warnung' },
    device: 'Gerät', value: 'Wert', since: 'Seit', open: 'In der Konsole öffnen:',
  },
};

export function alarmMail(language: string, what: What, alarm: AlarmRow, consoleUrl: string): { subject: string; text: string; language: MailLanguage } {
  const lang = mailLanguage(language);
  const w = WORDS[lang];
  const series = JSON.parse(alarm.series) as { measurement: string; field: string };
  const subject = `${w.what[what]} (${w.severity[alarm.severity] ?? alarm.severity}): ${alarm.rule_name}`;
  const link = `${consoleUrl.replace(/\/+$/, '')}/console/alarms?id=${alarm.id}`;
  const text = `${subject}\n\n`
    + `${w.device}: ${alarm.device_id}\n`
    + `${series.measurement}.${series.field}${alarm.value === null ? '' : ` — ${w.value}: ${alarm.value}`}\n`
    + `${w.since}: ${new Date(alarm.start_at).toISOString()}\n\n`
    + `${w.open}\n${link}\n`;
  return { subject, text, language: lang };
}
