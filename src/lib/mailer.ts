// Outgoing mail through SMTP with nodemailer (GRIDKEEPER_SMTP_URL). Without that setting the mailer is "not configured":
// callers log that no mail could be sent and operators hand out links with `gridkeeper user reset-link`.
import nodemailer from 'nodemailer';
import type { Config } from './config.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** BCP 47 language of the text (Content-Language) */
  language: string;
}

export interface Mailer {
  readonly configured: boolean;
  /** Resolves when the SMTP server accepted the message; rejects with the server's or the network's error. */
  send(message: MailMessage): Promise<void>;
}

export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom'>): Mailer {
  if (!config.smtpUrl) {
    return { configured: false, send: () => Promise.reject(new Error('no SMTP server configured (GRIDKEEPER_SMTP_URL)')) };
  }
  // One transport for the process; it opens a connection per message (no pool: reset mails are rare).
  const transport = nodemailer.createTransport({
    url: config.smtpUrl,
    // bounded: a dead server must not keep sockets and promises around for minutes
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  }, { from: config.mailFrom });
  return {
    configured: true,
    async send(message) {
      await transport.sendMail({
        to: message.to, subject: message.subject, text: message.text, headers: { 'Content-Language': message.language },
      });
    },
  };
}
