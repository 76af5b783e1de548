//! How the pages say values to a person, in the interface's language: dates (not ISO
//! timestamps), counts with their thousands marked, sums of money, language names (not codes), book and chapter states and the
//! engine that translates. Registered as the templates' filters (`|date`, `|datetime`,
//! `|number`, `|money`, `|language`, `|state`, `|engine`); each reads the page's `lang` (the interface's)
//! and falls back to English. `languages` lists [`LANGUAGES`] for the pages' choosers
//! (`app/languages.html`).

use chrono::{DateTime, Datelike, Timelike, Utc};
use minijinja::{Environment, State};

use super::app::i18n::Lang;

/// The languages offered by name where a target language is chosen: code, English name,
/// Spanish name. Any other code can still be typed; it is shown as its code.
pub const LANGUAGES: &[(&str, &str, &str)] = &[
    ("ar", "Arabic", "árabe"),
    ("bg", "Bulgarian", "búlgaro"),
    ("ca", "Catalan", "catalán"),
    ("cs", "Czech", "checo"),
    ("da", "Danish", "danés"),
    ("de", "German", "alemán"),
    ("el", "Greek", "griego"),
    ("en", "English", "inglés"),
    ("es", "Spanish", "español"),
    ("et", "Estonian", "estonio"),
    ("eu", "Basque", "euskera"),
    ("fa", "Persian", "persa"),
    ("fi", "Finnish", "finés"),
    ("fr", "French", "francés"),
    ("ga", "Irish", "irlandés"),
    ("gl", "Galician", "gallego"),
    ("he", "Hebrew", "hebreo"),
    ("hi", "Hindi", "hindi"),
    ("hr", "Croatian", "croata"),
    ("hu", "Hungarian", "húngaro"),
    ("id", "Indonesian", "indonesio"),
    ("it", "Italian", "italiano"),
    ("ja", "Japanese", "japonés"),
    ("ko", "Korean", "coreano"),
    ("lt", "Lithuanian", "lituano"),
    ("lv", "Latvian", "letón"),
    ("nb", "Norwegian Bokmål", "noruego bokmål"),
    ("nl", "Dutch", "neerlandés"),
    ("pl", "Polish", "polaco"),
    ("pt", "Portuguese", "portugués"),
    ("pt-BR", "Portuguese (Brazil)", "portugués (Brasil)"),
    ("ro", "Romanian", "rumano"),
    ("ru", "Russian", "ruso"),
    ("sk", "Slovak", "eslovaco"),
    ("sl", "Slovenian", "esloveno"),
    ("sr", "Serbian", "serbio"),
    ("sv", "Swedish", "sueco"),
    ("sw", "Swahili", "suajili"),
    ("th", "Thai", "tailandés"),
    ("tr", "Turkish", "turco"),
    ("uk", "Ukrainian", "ucraniano"),
    ("ur", "Urdu", "urdu"),
    ("vi", "Vietnamese", "vietnamita"),
    ("zh", "Chinese", "chino"),
    ("zh-Hant", "Chinese (Traditional)", "chino (tradicional)"),
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

/// Nothing to pay is "free"; a sum shows cents (or "less than 0.01" for a fraction of one), in
/// the interface's way of writing numbers.
pub fn money(lang: Lang, amount: f64, currency: &str) -> String {
    if amount <= 0.0 {
        return lang.get("free").to_string();
    }
    let below_a_cent = amount < 0.01;
    let figure = format!("{:.2}", amount.max(0.01));
    let figure = match lang {
        Lang::En => figure,
        Lang::Es => figure.replace('.', ","),
    };
    let sum = match (lang, currency) {
        (Lang::En, "USD") => format!("US${figure}"),
        (Lang::Es, "USD") => format!("{figure} US$"),
        _ => format!("{figure} {currency}"),
    };
    if below_a_cent {
        format!("{} {sum}", lang.get("less_than"))
    } else {
        sum
    }
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
            .find(|(c, _, _)| c.eq_ignore_ascii_case(code))
            .map(|(_, en, es)| match lang {
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
    fn nothing_to_pay_is_free_and_a_sum_shows_cents() {
        assert_eq!(money(Lang::En, 0.0, "USD"), "free");
        assert_eq!(money(Lang::Es, 0.0, "USD"), "gratis");
        assert_eq!(money(Lang::En, 1.5, "USD"), "US$1.50");
        assert_eq!(money(Lang::Es, 1.5, "USD"), "1,50 US$");
        assert_eq!(money(Lang::En, 0.001, "USD"), "less than US$0.01");
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
