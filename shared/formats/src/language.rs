//! Language identification for texts that do not declare their language.

/// The language of `text` as an ISO 639-1 code (639-3 where 639-1 has none), or None when the
/// sample is too short or ambiguous to tell.
pub fn detect_language(text: &str) -> Option<String> {
    // A few thousand characters decide as well as the whole book and keep this cheap.
    let sample: String = text.chars().take(5000).collect();
    let info = whatlang::detect(&sample)?;
    if !info.is_reliable() && info.confidence() < 0.5 {
        return None;
    }
    Some(code_of(info.lang()))
}

/// A whatlang language as an ISO 639-1 code (639-3 where 639-1 has none).
pub fn code_of(lang: whatlang::Lang) -> String {
    let code = lang.code();
    iso639_1(code).unwrap_or(code).to_string()
}

fn iso639_1(code3: &str) -> Option<&'static str> {
    const MAP: &[(&str, &str)] = &[
        ("eng", "en"),
        ("spa", "es"),
        ("fra", "fr"),
        ("deu", "de"),
        ("ita", "it"),
        ("por", "pt"),
        ("nld", "nl"),
        ("rus", "ru"),
        ("ukr", "uk"),
        ("pol", "pl"),
        ("ces", "cs"),
        ("slk", "sk"),
        ("swe", "sv"),
        ("dan", "da"),
        ("nob", "nb"),
        ("fin", "fi"),
        ("hun", "hu"),
        ("ron", "ro"),
        ("bul", "bg"),
        ("ell", "el"),
        ("tur", "tr"),
        ("ara", "ar"),
        ("heb", "he"),
        ("pes", "fa"),
        ("hin", "hi"),
        ("ben", "bn"),
        ("urd", "ur"),
        ("cmn", "zh"),
        ("jpn", "ja"),
        ("kor", "ko"),
        ("vie", "vi"),
        ("tha", "th"),
        ("ind", "id"),
        ("cat", "ca"),
        ("hrv", "hr"),
        ("srp", "sr"),
        ("slv", "sl"),
        ("lit", "lt"),
        ("lav", "lv"),
        ("est", "et"),
        ("epo", "eo"),
        ("lat", "la"),
    ];
    MAP.iter().find(|(c3, _)| *c3 == code3).map(|(_, c1)| *c1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_languages_are_told_by_their_two_letter_code() {
        let en = "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, and nothing particular to interest me on shore, I thought I would sail about a little and see the watery part of the world.";
        let es = "En un lugar de la Mancha, de cuyo nombre no quiero acordarme, no ha mucho tiempo que vivía un hidalgo de los de lanza en astillero, adarga antigua, rocín flaco y galgo corredor.";
        assert_eq!(detect_language(en).as_deref(), Some("en"));
        assert_eq!(detect_language(es).as_deref(), Some("es"));
    }
}
