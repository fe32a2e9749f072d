user_pref("mail.spellcheck.inline", false);
user_pref("mail.identity.id1.fullName", "A \"B\"");
