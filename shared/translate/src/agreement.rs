//! How far two translations of one text agree: the character n-gram F-score (chrF, n = 1 to 6,
//! whitespace left out, precision and recall weighed alike), 0 to 100.
//!
//! Two independent translations of a passage by the same small model agree less the harder the
//! passage was for it: replayed over the quality bench's draws of Frankenstein's letters 1 and
//! 3, the agreement of the plain prompt's and booktr's translations of a paragraph ranked the
//! paragraphs by their chrF against the published human translation at a Spearman of 0.5 to
//! 0.7. The second opinion (`pipeline::second_opinion`) measures it, and the block's confidence
//! counts it.

/// The longest character n-gram counted.
const ORDER: usize = 6;

/// chrF between `a` and `b` (symmetric), 0 to 100; 100 for two texts without letters.
pub fn agreement(a: &str, b: &str) -> f64 {
    Grams::of(a).agreement(&Grams::of(b))
}

/// A text's character n-grams (n = 1 to 6, whitespace left out), each hashed and each order
/// sorted: made once for a text compared with many (the translation memory's close matches).
pub struct Grams {
    /// Characters, whitespace left out.
    len: usize,
    orders: [Vec<u64>; ORDER],
}

impl Grams {
    pub fn of(text: &str) -> Grams {
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        Grams {
            len: chars.len(),
            orders: std::array::from_fn(|at| grams(&chars, at + 1)),
        }
    }

    /// chrF against `other`, 0 to 100 (see [`agreement`]).
    pub fn agreement(&self, other: &Grams) -> f64 {
        if self.len == 0 && other.len == 0 {
            return 100.0;
        }
        let mut total = 0.0;
        let mut orders = 0;
        for (left, right) in self.orders.iter().zip(&other.orders) {
            if left.is_empty() || right.is_empty() {
                // A text shorter than n has no n-grams: the orders both have decide.
                if !(left.is_empty() && right.is_empty()) {
                    orders += 1;
                }
                continue;
            }
            let matched = shared(left, right);
            let precision = matched as f64 / left.len() as f64;
            let recall = matched as f64 / right.len() as f64;
            if precision + recall > 0.0 {
                total += 2.0 * precision * recall / (precision + recall);
            }
            orders += 1;
        }
        if orders == 0 {
            return 0.0;
        }
        100.0 * total / orders as f64
    }

    /// The most [`Grams::agreement`] can be between texts of these two lengths (every n-gram
    /// of the shorter shared): a bound that spares comparing texts of far unlike lengths.
    pub fn at_most(&self, other: &Grams) -> f64 {
        let (short, long) = (self.len.min(other.len), self.len.max(other.len));
        if long == 0 {
            return 100.0;
        }
        let bounds: Vec<f64> = (1..=ORDER)
            .filter(|n| *n <= long)
            .map(|n| {
                let (s, l) = ((short + 1).saturating_sub(n), long + 1 - n);
                2.0 * s as f64 / (s + l) as f64
            })
            .collect();
        100.0 * bounds.iter().sum::<f64>() / bounds.len() as f64
    }
}

/// The n-grams of `text`, hashed (FNV-1a over the characters) and sorted.
fn grams(text: &[char], n: usize) -> Vec<u64> {
    let mut out: Vec<u64> = text
        .windows(n)
        .map(|gram| {
            gram.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, c| {
                (hash ^ u64::from(*c)).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect();
    out.sort_unstable();
    out
}

/// How many n-grams two sorted lists share, each counted as often as both have it.
fn shared(left: &[u64], right: &[u64]) -> usize {
    let (mut i, mut j, mut matched) = (0, 0, 0);
    while i < left.len() && j < right.len() {
        match left[i].cmp(&right[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                matched += 1;
                i += 1;
                j += 1;
            }
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::{agreement, Grams};

    #[test]
    fn the_same_text_agrees_fully_and_unrelated_texts_hardly_at_all() {
        let text = "Vous vous réjouirez d'apprendre qu'aucun malheur n'a accompagné le début.";
        assert_eq!(agreement(text, text), 100.0);
        assert!(agreement(text, "Zyx wvq kjh.") < 5.0);
        assert_eq!(agreement("", ""), 100.0);
        assert_eq!(agreement("abc", ""), 0.0);
    }

    #[test]
    fn agreement_is_symmetric_and_falls_as_the_wording_parts() {
        let a = "Je suis arrivé hier, et ma première tâche est de rassurer ma chère sœur.";
        let close = "Je suis arrivé hier et ma première tâche est de rassurer ma sœur chérie.";
        let far = "Hier, à mon arrivée, j'ai voulu d'abord tranquilliser ma sœur bien-aimée.";
        assert_eq!(agreement(a, close), agreement(close, a));
        assert!(agreement(a, close) > 70.0, "{}", agreement(a, close));
        assert!(agreement(a, far) < agreement(a, close));
        assert!(agreement(a, far) > 10.0);
    }

    #[test]
    fn no_two_texts_agree_more_than_their_lengths_allow() {
        let texts = [
            "Call me Ishmael.",
            "Call me Ishmael. Some years ago",
            "Call me Ishmael. Some years ago, never mind how long precisely.",
            "",
            "a",
        ];
        for a in texts {
            for b in texts {
                let (a, b) = (Grams::of(a), Grams::of(b));
                assert!(a.agreement(&b) <= a.at_most(&b) + 1e-9);
            }
        }
    }

    #[test]
    fn whitespace_plays_no_part() {
        assert_eq!(agreement("la mer", "la  mer\n"), 100.0);
    }
}
