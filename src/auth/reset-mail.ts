// The password-reset e-mail in English, Dutch, French and German. The language comes from `?language=` (a BCP 47 tag
// such as nl or nl-BE); anything else falls back to English.
export const MAIL_LANGUAGES = ['en', 'nl', 'fr', 'de'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

export function mailLanguage(tag: string | undefined): MailLanguage {
  const primary = (tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return (MAIL_LANGUAGES as readonly string[]).includes(primary) ? primary as MailLanguage : 'en';
}

const TEXTS: Record<MailLanguage, { subject: string; body: (link: string, minutes: number) => string }> = {
  en: {
    subject: 'Reset your gridkeeper password',
    body: (link, minutes) => `Someone asked to reset the password of your gridkeeper account.\n\n`
      + `To choose a new password, open this link within ${minutes} minutes:\n\n${link}\n\n`
      + `The link works once. If you did not ask for it, ignore this message: your password stays as it is.\n`,
  },
  nl: {
    subject: 'Stel je gridkeeper-wachtwoord opnieuw in',
    body: (link, minutes) => `Iemand heeft gevraagd het wachtwoord van je gridkeeper-account opnieuw in te stellen.\n\n`
      + `Open deze link binnen ${minutes} minuten om een nieuw wachtwoord te kiezen:\n\n${link}\n\n`
      + `De link werkt één keer. Heb je dit niet gevraagd, negeer dan dit bericht: je wachtwoord blijft ongewijzigd.\n`,
  },
  fr: {
    subject: 'Réinitialisez votre mot de passe gridkeeper',
    body: (link, minutes) => `Quelqu'un a demandé la réinitialisation du mot de passe de votre compte gridkeeper.\n\n`
      + `Pour choisir un nouveau mot de passe, ouvrez ce lien dans les ${minutes} minutes :\n\n${link}\n\n`
      + `Le lien ne fonctionne qu'une fois. Si vous n'avez rien demandé, ignorez ce message : votre mot de passe reste inchangé.\n`,
  },
  de: {
    subject: 'Setzen Sie Ihr gridkeeper-Passwort zurück',
    body: (link, minutes) => `Jemand hat angefordert, das Passwort Ihres gridkeeper-Kontos zurückzusetzen.\n\n`
      + `Öffnen Sie diesen Link innerhalb von ${minutes} Minuten, um ein neues Passwort zu wählen:\n\n${link}\n\n`
      + `Der Link funktioniert einmal. Wenn Sie das nicht angefordert haben, ignorieren Sie diese Nachricht: Ihr Passwort bleibt unverändert.\n`,
  },
};

export function resetMail(language: MailLanguage, link: string, minutes: number): { subject: string; text: string } {
  const t = TEXTS[language];
  return { subject: t.subject, text: t.body(link, minutes) };
}
