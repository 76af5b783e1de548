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
    let a: Vec<char> = a.chars().filter(|c| !c.is_whitespace()).collect();
    let b: Vec<char> = b.chars().filter(|c| !c.is_whitespace()).collect();
    if a.is_empty() && b.is_empty() {
        return 100.0;
    }
    let mut total = 0.0;
    let mut orders = 0;
    for n in 1..=ORDER {
        let (left, right) = (grams(&a, n), grams(&b, n));
        if left.is_empty() || right.is_empty() {
            // A text shorter than n has no n-grams: the orders both have decide.
            if !(left.is_empty() && right.is_empty()) {
                orders += 1;
            }
            continue;
        }
        let matched = shared(&left, &right);
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

/// The n-grams of `text`, sorted.
fn grams(text: &[char], n: usize) -> Vec<String> {
    let mut out: Vec<String> = text.windows(n).map(|gram| gram.iter().collect()).collect();
    out.sort();
    out
}

/// How many n-grams two sorted lists share, each counted as often as both have it.
fn shared(left: &[String], right: &[String]) -> usize {
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
    use super::agreement;

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
    fn whitespace_plays_no_part() {
        assert_eq!(agreement("la mer", "la  mer\n"), 100.0);
    }
}
