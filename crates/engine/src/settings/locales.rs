//! The locales `localizedAttributes` and a search's `locales` accept, in Meilisearch's order.
//!
//! A two-letter code is accepted and stored as its three-letter equivalent; `cmn` stands
//! alone. The binding exports this table so the request validators use the same list.

/// `[two-letter, three-letter]` pairs.
pub const LOCALE_PAIRS: [(&str, &str); 69] = [
    ("af", "afr"),
    ("ak", "aka"),
    ("am", "amh"),
    ("ar", "ara"),
    ("az", "aze"),
    ("be", "bel"),
    ("bn", "ben"),
    ("bg", "bul"),
    ("ca", "cat"),
    ("cs", "ces"),
    ("da", "dan"),
    ("de", "deu"),
    ("el", "ell"),
    ("en", "eng"),
    ("eo", "epo"),
    ("et", "est"),
    ("fi", "fin"),
    ("fr", "fra"),
    ("gu", "guj"),
    ("he", "heb"),
    ("hi", "hin"),
    ("hr", "hrv"),
    ("hu", "hun"),
    ("hy", "hye"),
    ("id", "ind"),
    ("it", "ita"),
    ("jv", "jav"),
    ("ja", "jpn"),
    ("kn", "kan"),
    ("ka", "kat"),
    ("km", "khm"),
    ("ko", "kor"),
    ("la", "lat"),
    ("lv", "lav"),
    ("lt", "lit"),
    ("ml", "mal"),
    ("mr", "mar"),
    ("mk", "mkd"),
    ("my", "mya"),
    ("ne", "nep"),
    ("nl", "nld"),
    ("nb", "nob"),
    ("or", "ori"),
    ("pa", "pan"),
    ("fa", "pes"),
    ("pl", "pol"),
    ("pt", "por"),
    ("ro", "ron"),
    ("ru", "rus"),
    ("si", "sin"),
    ("sk", "slk"),
    ("sl", "slv"),
    ("sn", "sna"),
    ("es", "spa"),
    ("sr", "srp"),
    ("sv", "swe"),
    ("ta", "tam"),
    ("te", "tel"),
    ("tl", "tgl"),
    ("th", "tha"),
    ("tk", "tuk"),
    ("tr", "tur"),
    ("uk", "ukr"),
    ("ur", "urd"),
    ("uz", "uzb"),
    ("vi", "vie"),
    ("yi", "yid"),
    ("zh", "zho"),
    ("zu", "zul"),
];

/// The code that stands without a two-letter form.
const LONE_LOCALE: &str = "cmn";

/// Accepted locale codes in the order deserr lists them: two-letter, three-letter, `cmn`.
pub fn locales() -> Vec<&'static str> {
    let two = LOCALE_PAIRS.iter().map(|(two, _)| *two);
    let three = LOCALE_PAIRS.iter().map(|(_, three)| *three);
    two.chain(three).chain([LONE_LOCALE]).collect()
}

/// The code a locale is stored (and returned) as.
pub fn canonical_locale(code: &str) -> &str {
    LOCALE_PAIRS
        .iter()
        .find(|(two, _)| *two == code)
        .map_or(code, |(_, three)| three)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_locales_list_two_then_three_letter_codes() {
        let all = locales();
        assert_eq!(all.len(), 2 * LOCALE_PAIRS.len() + 1);
        assert_eq!(all[0], "af");
        assert_eq!(all[LOCALE_PAIRS.len()], "afr");
        assert_eq!(all.last(), Some(&"cmn"));
        assert_eq!(canonical_locale("zh"), "zho");
        assert_eq!(canonical_locale("jpn"), "jpn");
        assert_eq!(canonical_locale("cmn"), "cmn");
    }
}
