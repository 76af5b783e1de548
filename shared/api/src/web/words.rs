//! How the pages say values to a person, in the interface's language: dates (not ISO
//! timestamps), counts with their thousands marked, sums of money, language names (not codes), book and chapter states and the
//! engine that translates. Registered as the templates' filters (`|date`, `|datetime`,
//! `|number`, `|plural`, `|money`, `|language`, `|state`, `|engine`); each reads the page's `lang` (the interface's)
//! and falls back to English. `languages` lists [`LANGUAGES`] for the pages' choosers
//! (`app/languages.html`).

use booktr_core::types::LanguageCode;
use chrono::{DateTime, Datelike, Timelike, Utc};
use minijinja::{Environment, State};

use super::app::i18n::Lang;

/// The languages offered by name where a target language is chosen: code, English name,
/// Spanish name, and the name in the language itself. Any other code can still be typed; it is
/// shown as its code.
pub const LANGUAGES: &[(&str, &str, &str, &str)] = &[
    ("ar", "Arabic", "árabe", "العربية"),
    ("bg", "Bulgarian", "búlgaro", "български"),
    ("ca", "Catalan", "catalán", "català"),
    ("cs", "Czech", "checo", "čeština"),
    ("da", "Danish", "danés", "dansk"),
    ("de", "German", "alemán", "Deutsch"),
    ("el", "Greek", "griego", "Ελληνικά"),
    ("en", "English", "inglés", "English"),
    ("es", "Spanish", "español", "español"),
    ("et", "Estonian", "estonio", "eesti"),
    ("eu", "Basque", "euskera", "euskara"),
    ("fa", "Persian", "persa", "فارسی"),
    ("fi", "Finnish", "finés", "suomi"),
    ("fr", "French", "francés", "français"),
    ("ga", "Irish", "irlandés", "Gaeilge"),
    ("gl", "Galician", "gallego", "galego"),
    ("he", "Hebrew", "hebreo", "עברית"),
    ("hi", "Hindi", "hindi", "हिन्दी"),
    ("hr", "Croatian", "croata", "hrvatski"),
    ("hu", "Hungarian", "húngaro", "magyar"),
    ("id", "Indonesian", "indonesio", "Bahasa Indonesia"),
    ("it", "Italian", "italiano", "italiano"),
    ("ja", "Japanese", "japonés", "日本語"),
    ("ko", "Korean", "coreano", "한국어"),
    ("lt", "Lithuanian", "lituano", "lietuvių"),
    ("lv", "Latvian", "letón", "latviešu"),
    ("nb", "Norwegian Bokmål", "noruego bokmål", "norsk bokmål"),
    ("nl", "Dutch", "neerlandés", "Nederlands"),
    ("pl", "Polish", "polaco", "polski"),
    ("pt", "Portuguese", "portugués", "português"),
    (
        "pt-BR",
        "Portuguese (Brazil)",
        "portugués (Brasil)",
        "português (Brasil)",
    ),
    ("ro", "Romanian", "rumano", "română"),
    ("ru", "Russian", "ruso", "русский"),
    ("sk", "Slovak", "eslovaco", "slovenčina"),
    ("sl", "Slovenian", "esloveno", "slovenščina"),
    ("sr", "Serbian", "serbio", "српски"),
    ("sv", "Swedish", "sueco", "svenska"),
    ("sw", "Swahili", "suajili", "Kiswahili"),
    ("th", "Thai", "tailandés", "ไทย"),
    ("tr", "Turkish", "turco", "Türkçe"),
    ("uk", "Ukrainian", "ucraniano", "українська"),
    ("ur", "Urdu", "urdu", "اردو"),
    ("vi", "Vietnamese", "vietnamita", "Tiếng Việt"),
    ("zh", "Chinese", "chino", "中文"),
    (
        "zh-Hant",
        "Chinese (Traditional)",
        "chino (tradicional)",
        "中文（繁體）",
    ),
];

/// The code that says a book's language is not known (BCP 47's "undetermined").
pub const UNKNOWN_LANGUAGE: &str = "und";

/// The offline engine's name, as the services report it.
const OFFLINE_ENGINE: &str = "offline-pseudo";

const MONTHS_EN: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const MONTHS_ES: [&str; 12] = [
    "ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic",
];

pub fn register(env: &mut Environment<'static>) {
    env.add_global("languages", minijinja::Value::from_serialize(LANGUAGES));
    env.add_filter("date", |state: &State, value: String| {
        when(&value).map_or(value, |at| date(lang_of(state), at))
    });
    env.add_filter("datetime", |state: &State, value: String| {
        when(&value).map_or(value, |at| datetime(lang_of(state), at))
    });
    env.add_filter("money", |state: &State, amount: f64, currency: String| {
        money(lang_of(state), amount, &currency)
    });
    env.add_filter("number", |state: &State, n: i64| number(lang_of(state), n));
    env.add_filter("plural", |state: &State, n: i64, key: String| {
        plural(lang_of(state), n, &key)
    });
    env.add_filter("language", |state: &State, code: String| {
        language(lang_of(state), &code)
    });
    env.add_filter("state", |state: &State, status: String| {
        status_word(lang_of(state), &status)
    });
    env.add_filter("engine", |state: &State, engine: String| {
        engine_name(lang_of(state), &engine)
    });
}

/// The interface's language of the page being rendered: `ui` where the page's `lang` is the
/// book's (the shared reader), else `lang`.
fn lang_of(state: &State) -> Lang {
    ["ui", "lang"]
        .iter()
        .find_map(|name| state.lookup(name))
        .and_then(|v| v.as_str().and_then(Lang::parse))
        .unwrap_or(Lang::En)
}

fn when(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// "27 Nov 2026" / "27 nov 2026".
pub fn date(lang: Lang, at: DateTime<Utc>) -> String {
    let months = match lang {
        Lang::En => MONTHS_EN,
        Lang::Es => MONTHS_ES,
    };
    format!(
        "{} {} {}",
        at.day(),
        months[at.month0() as usize],
        at.year()
    )
}

/// "27 Nov 2026, 14:05 UTC": the server knows no reader's time zone, so it says which it uses.
pub fn datetime(lang: Lang, at: DateTime<Utc>) -> String {
    format!(
        "{}, {:02}:{:02} UTC",
        date(lang, at),
        at.hour(),
        at.minute()
    )
}

/// A count with its thousands marked: "67,543" / "67.543".
pub fn number(lang: Lang, n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mark = match lang {
        Lang::En => ',',
        Lang::Es => '.',
    };
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(mark);
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// Nothing to pay is "free"; a sum shows cents, and three decimals under ten cents (so that
/// a quote of US$0.015 and a run that cost US$0.016 do not read as one cent against two), or
/// "less than 0.001" for a fraction of a tenth of a cent, in the interface's way of writing
/// numbers. The quote and the run's cost are both written by it.
pub fn money(lang: Lang, amount: f64, currency: &str) -> String {
    if amount <= 0.0 {
        return lang.get("free").to_string();
    }
    let below = amount < 0.001;
    let thousandths = (amount.max(0.001) * 1000.0).round() / 1000.0;
    let figure = if thousandths < 0.1 {
        format!("{thousandths:.3}")
    } else {
        format!("{amount:.2}")
    };
    let figure = match lang {
        Lang::En => figure,
        Lang::Es => figure.replace('.', ","),
    };
    let sum = match (lang, currency) {
        (Lang::En, "USD") => format!("US${figure}"),
        (Lang::Es, "USD") => format!("{figure} US$"),
        _ => format!("{figure} {currency}"),
    };
    if below {
        format!("{} {sum}", lang.get("less_than"))
    } else {
        sum
    }
}

/// A count and what it counts, in the singular for one: `key` names a message of two forms,
/// "one|other", each with `{n}` where the count goes ("1 entry", "3 entries").
pub fn plural(lang: Lang, n: i64, key: &str) -> String {
    let forms = lang.get(key);
    let (one, other) = forms.split_once('|').unwrap_or((forms, forms));
    let form = if n == 1 { one } else { other };
    form.replace("{n}", &number(lang, n))
}

/// The language's name in the interface's language, the code itself for one not listed, and
/// "unknown" for the undetermined code.
pub fn language(lang: Lang, code: &str) -> String {
    if code.is_empty() || code.eq_ignore_ascii_case(UNKNOWN_LANGUAGE) {
        return lang.get("language_unknown").to_string();
    }
    let named = |code: &str| {
        LANGUAGES
            .iter()
            .find(|(c, _, _, _)| c.eq_ignore_ascii_case(code))
            .map(|(_, en, es, _)| match lang {
                Lang::En => en.to_string(),
                Lang::Es => es.to_string(),
            })
    };
    if let Some(name) = named(code) {
        return name;
    }
    // A regional variant not listed ("en-US"): the language's name and the rest of the code.
    match code.split_once(['-', '_']) {
        Some((primary, rest)) => {
            named(primary).map_or_else(|| code.to_string(), |name| format!("{name} ({rest})"))
        }
        None => code.to_string(),
    }
}

/// The language code a person typed into a language field: a language's name in English, in
/// Spanish or in the language itself ("French", "francés", "français"), whatever its case and
/// accents; a name with a region as [`language`] writes it ("English (US)"); or a code, as the
/// API takes any (`fr`, `pt-BR`, `tlh`). None for anything else. The web app turns names into
/// codes here, before calling the services, which (as the API) take codes alone.
pub fn language_code(typed: &str) -> Option<String> {
    let typed = typed.trim();
    if typed.is_empty() {
        return None;
    }
    let by_name = |name: &str| {
        let wanted = folded(name);
        LANGUAGES
            .iter()
            .find(|(_, en, es, own)| [en, es, own].iter().any(|n| folded(n) == wanted))
            .map(|(code, ..)| code.to_string())
    };
    if let Some(code) = by_name(typed) {
        return Some(code);
    }
    if let Some((name, rest)) = typed.strip_suffix(')').and_then(|t| t.split_once(" (")) {
        if let Some(code) = by_name(name) {
            return LanguageCode::parse(&format!("{code}-{rest}"))
                .ok()
                .map(|c| c.to_string());
        }
    }
    LanguageCode::parse(typed).ok().map(|c| c.to_string())
}

/// A name as [`language_code`] compares it: lower case, without the accents of Latin letters.
fn folded(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' | 'å' => 'a',
            'é' | 'è' | 'ê' | 'ë' | 'ę' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' | 'ø' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ñ' => 'n',
            'ç' | 'č' => 'c',
            'š' => 's',
            'ž' => 'z',
            'ș' | 'ş' => 's',
            'ț' => 't',
            other => other,
        })
        .collect()
}

/// What a language field says when it holds no language: what was typed, and a few names and
/// codes it could hold.
pub fn unknown_language(lang: Lang, typed: &str) -> String {
    lang.get("language_not_known")
        .replace("{typed}", typed.trim())
}

/// How a passage is named beside its chapter's title: its first words (eight at most, of its
/// text without the markup), "…" where the text goes on. A `<num/>` mark's number (a verse
/// line's, a note's call) is not among its words, nor glued to them; a passage of a number
/// alone is named by it.
pub fn first_words(markup: &str) -> String {
    use booktr_formats::markup::{parse, plain_text, Piece, Tag};
    const WORDS: usize = 8;
    let words: String = match parse(markup) {
        Ok(pieces) => pieces
            .into_iter()
            .map(|piece| match piece {
                Piece::Text(text) => text,
                Piece::Tag(Tag::Num { .. } | Tag::Empty { name: "br", .. }) => " ".to_string(),
                Piece::Tag(_) => String::new(),
            })
            .collect(),
        Err(_) => plain_text(markup),
    };
    let text = match words.trim().is_empty() {
        true => plain_text(markup),
        false => words,
    };
    let mut words = text.split_whitespace();
    let shown: Vec<&str> = words.by_ref().take(WORDS).collect();
    let mut named = shown.join(" ");
    if words.next().is_some() {
        named.push('…');
    }
    named
}

/// A state (a book's, a chapter's, a delivery's, a post's or a comment's: `TRANSLATING`) as a
/// word of the interface; one without a word stays as it is.
pub fn status_word(lang: Lang, status: &str) -> String {
    let key = format!("state_{}", status.to_ascii_lowercase());
    lang.find(&key)
        .map_or_else(|| status.to_string(), str::to_string)
}

/// The engine's name: the offline one is named for what it is.
pub fn engine_name(lang: Lang, engine: &str) -> String {
    if engine == OFFLINE_ENGINE {
        lang.get("engine_offline").to_string()
    } else {
        engine.to_string()
    }
}

/// The state words (books', chapters', deliveries') the pages' script writes when a state
/// changes in place.
pub fn status_words(lang: Lang) -> std::collections::BTreeMap<&'static str, String> {
    [
        "UPLOADED",
        "EXTRACTING",
        "EXTRACTED",
        "TRANSLATING",
        "TRANSLATED",
        "GENERATING",
        "COMPLETED",
        "PAUSED",
        "ERROR",
        "PENDING",
        "RETRYING",
        "DELIVERED",
        "FAILED",
    ]
    .into_iter()
    .map(|s| (s, status_word(lang, s)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn dates_read_as_day_month_year_in_the_interfaces_language() {
        let at = Utc.with_ymd_and_hms(2026, 11, 27, 14, 5, 0).unwrap();
        assert_eq!(date(Lang::En, at), "27 Nov 2026");
        assert_eq!(date(Lang::Es, at), "27 nov 2026");
        assert_eq!(datetime(Lang::En, at), "27 Nov 2026, 14:05 UTC");
    }

    #[test]
    fn counts_mark_their_thousands_as_the_interface_writes_them() {
        assert_eq!(number(Lang::En, 67_543), "67,543");
        assert_eq!(number(Lang::Es, 1_234_567), "1.234.567");
        assert_eq!(number(Lang::En, 999), "999");
        assert_eq!(number(Lang::En, -1_000), "-1,000");
    }

    #[test]
    fn nothing_to_pay_is_free_and_a_sum_shows_cents_or_thousandths_under_ten_cents() {
        assert_eq!(money(Lang::En, 0.0, "USD"), "free");
        assert_eq!(money(Lang::Es, 0.0, "USD"), "gratis");
        assert_eq!(money(Lang::En, 1.5, "USD"), "US$1.50");
        assert_eq!(money(Lang::Es, 1.5, "USD"), "1,50 US$");
        assert_eq!(money(Lang::En, 0.25, "USD"), "US$0.25");
        // A quote of 0.0149 and a run of 0.0151 read alike, not as one cent against two.
        assert_eq!(money(Lang::En, 0.0149, "USD"), "US$0.015");
        assert_eq!(money(Lang::En, 0.0151, "USD"), "US$0.015");
        assert_eq!(money(Lang::Es, 0.004, "USD"), "0,004 US$");
        assert_eq!(money(Lang::En, 0.0996, "USD"), "US$0.10");
        assert_eq!(money(Lang::En, 0.0004, "USD"), "less than US$0.001");
    }

    #[test]
    fn a_passage_is_named_by_its_first_words_without_its_markup() {
        assert_eq!(
            first_words("<i>Call</i> me Ishmael. Some years ago, never mind how long"),
            "Call me Ishmael. Some years ago, never mind…"
        );
        assert_eq!(first_words("Loomings."), "Loomings.");
        // A verse line's number is not a word of it.
        assert_eq!(
            first_words(r#"The lady of situations.<num class="lnum" text="50"/>"#),
            "The lady of situations."
        );
        assert_eq!(first_words(r#"<num class="lnum" text="IV"/>"#), "IV");
    }

    #[test]
    fn a_count_of_one_is_said_in_the_singular() {
        assert_eq!(plural(Lang::En, 1, "count_entries"), "1 entry");
        assert_eq!(plural(Lang::En, 0, "count_entries"), "0 entries");
        assert_eq!(plural(Lang::En, 1_200, "count_entries"), "1,200 entries");
        assert_eq!(plural(Lang::Es, 1, "count_entries"), "1 entrada");
        assert_eq!(
            plural(Lang::Es, 2, "count_passages_flagged"),
            "2 pasajes señalados"
        );
        assert_eq!(
            plural(Lang::En, 1, "proposal_said_accepted"),
            "Accepted: 1 passage now holds the new translation."
        );
        assert_eq!(
            plural(Lang::En, 3, "proposal_said_accepted"),
            "Accepted: 3 passages now hold the new translation."
        );
    }

    #[test]
    fn a_language_is_typed_by_its_name_in_english_spanish_or_itself_or_by_its_code() {
        for typed in [
            "French",
            "french",
            " FRENCH ",
            "francés",
            "frances",
            "Français",
            "fr",
            "FR",
        ] {
            assert_eq!(language_code(typed).as_deref(), Some("fr"), "{typed}");
        }
        assert_eq!(language_code("Deutsch").as_deref(), Some("de"));
        assert_eq!(language_code("日本語").as_deref(), Some("ja"));
        assert_eq!(language_code("español").as_deref(), Some("es"));
        assert_eq!(
            language_code("Portuguese (Brazil)").as_deref(),
            Some("pt-BR")
        );
        assert_eq!(language_code("pt_br").as_deref(), Some("pt-BR"));
        // As the language filter writes a regional code it does not list, and any code.
        assert_eq!(language_code("English (US)").as_deref(), Some("en-US"));
        assert_eq!(language_code("inglés (US)").as_deref(), Some("en-US"));
        assert_eq!(language_code("tlh").as_deref(), Some("tlh"));
        for code in ["es", "pt-BR", "zh-Hant", "en-US"] {
            let name = language(Lang::Es, code);
            assert_eq!(language_code(&name).as_deref(), Some(code), "{name}");
        }
        for unknown in ["Klingon", "Frenchh", "", "   ", "1234"] {
            assert_eq!(language_code(unknown), None, "{unknown}");
        }
        let said = unknown_language(Lang::En, " Klingon ");
        assert!(
            said.starts_with("\u{201c}Klingon\u{201d} is not a language"),
            "{said}"
        );
        assert!(said.contains("French") && said.contains("pt-BR"), "{said}");
    }

    #[test]
    fn a_language_is_named_and_the_undetermined_one_is_unknown() {
        assert_eq!(language(Lang::En, "fr"), "French");
        assert_eq!(language(Lang::Es, "fr"), "francés");
        assert_eq!(language(Lang::En, "und"), "not recognised");
        assert_eq!(language(Lang::En, "tlh"), "tlh");
        assert_eq!(language(Lang::Es, "en-US"), "inglés (US)");
    }

    #[test]
    fn states_and_the_offline_engine_are_said_in_the_interfaces_language() {
        assert_eq!(status_word(Lang::Es, "TRANSLATING"), "traduciendo");
        assert_eq!(status_word(Lang::En, "COMPLETED"), "translated");
        assert_eq!(status_word(Lang::En, "SOMETHING_NEW"), "SOMETHING_NEW");
        assert!(engine_name(Lang::En, "offline-pseudo").contains("offline"));
        assert_eq!(engine_name(Lang::En, "gpt-4o-mini"), "gpt-4o-mini");
    }
}
