// A real SMTP server on loopback (the smtp-server package) that keeps what arrives, parsed with mailparser. It asks for
// the credentials it was given (plain AUTH on loopback) and offers no STARTTLS, so the client speaks plain SMTP.
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  /** envelope */
  from: string;
  to: string[];
  /** the user name the client authenticated with */
  user: string | undefined;
  parsed: ParsedMail;
}

export interface TestSmtp {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** the next message not yet taken; rejects after `timeoutMs` */
  next(timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtp(credentials = { user: 'mailer', pass: 'smtp-secret-1' }): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let taken = 0;
  const waiting: (() => void)[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          parsed,
        });
        waiting.splice(0).forEach((wake) => wake());
        callback();
      }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${credentials.user}:${credentials.pass}@127.0.0.1:${port}`,
    received,
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (taken >= received.length) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail arrived within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => { waiting.push(resolve); setTimeout(resolve, left); });
      }
      return received[taken++];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
