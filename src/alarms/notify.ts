// What follows a committed unit of work with alarm transitions: the events it wrote are delivered (wake), and the
// transitions the repeat limit lets through are mailed to the rule's recipients. A mail that fails is logged; the
// event stream carries every transition regardless.
import type { Db } from '../db/open.ts';
import type { Logger } from '../lib/logger.ts';
import type { Mailer } from '../lib/mailer.ts';
import { recipientEmails, type Notice } from './alarms.service.ts';
import { alarmMail } from './mail.ts';

export interface Teller {
  db: Db;
  log: Logger;
  mailer: Mailer;
  consoleUrl: string;
  wake: () => void;
}

export async function tell(o: Teller, notices: readonly Notice[]): Promise<void> {
  if (notices.length === 0) return;
  o.wake();
  const mails = notices.filter((n) => n.mail && n.rule !== undefined);
  if (mails.length === 0) return;
  if (!o.mailer.configured) {
    o.log.warn('alarm mails not sent: no SMTP server configured (GRIDKEEPER_SMTP_URL)', { alarms: mails.map((n) => n.alarm.id) });
    return;
  }
  const emails = await recipientEmails(o.db, mails.map((n) => n.rule!));
  const sent: Promise<void>[] = [];
  for (const n of mails) {
    for (const r of JSON.parse(n.rule!.notify) as { userId: number; language: string }[]) {
      const to = emails.get(r.userId);
      if (to === undefined) continue;
      const mail = alarmMail(r.language, n.what, n.alarm, o.consoleUrl);
      sent.push(o.mailer.send({ to, subject: mail.subject, text: mail.text, language: mail.language })
        .catch((err: unknown) => o.log.warn('alarm mail not sent', { alarm: n.alarm.id, to, error: String((err as Error)?.message ?? err) })));
    }
  }
  await Promise.all(sent);
}

/** tell() after a request: its own error handling, nothing for the request to wait for. */
export function tellLater(o: Teller, notices: readonly Notice[]): void {
  if (notices.length === 0) return;
  void tell(o, notices).catch((err: unknown) => o.log.error('alarm notification failed', { error: String((err as Error)?.stack ?? err) }));
}
