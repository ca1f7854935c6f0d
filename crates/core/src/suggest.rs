//! "Did you mean": the names closest to a mistyped one.

/// A name without case, `-`, `_` and spaces.
fn fold(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Edit distance between `a` and `b`, ignoring case, `-`, `_` and spaces (so `font_size`,
/// `fontsize` and `fontSize` are the same name).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (fold(a), fold(b));
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = if ca == cb {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = here;
        }
    }
    row[b.len()]
}

/// Up to `max` of `candidates` close enough to `wanted` to be what was meant, closest first:
/// at most a third of the longer name's letters differ, or one contains the other.
pub fn closest<'a>(wanted: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
    let folded = fold(wanted);
    let mut scored: Vec<(usize, &'a str)> = candidates
        .iter()
        .filter_map(|&c| {
            // A nested path (`sizes.fontSize`) is also compared by its last name.
            let last = c.rsplit('.').next().unwrap_or(c);
            let d = distance(wanted, c).min(distance(wanted, last));
            let other = fold(last);
            let longest = folded.len().max(other.len());
            let shorter = folded.len().min(other.len());
            let prefix = folded
                .iter()
                .zip(&other)
                .take_while(|(a, b)| a == b)
                .count();
            let contains =
                folded.len() >= 3 && (contains(&other, &folded) || contains(&folded, &other));
            let close = d * 3 <= longest || contains || (prefix >= 4 && prefix * 2 >= shorter);
            close.then_some((d, c))
        })
        .collect();
    scored.sort_by_key(|&(d, c)| (d, c));
    scored.dedup_by_key(|(_, c)| *c);
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

/// Whether `haystack` holds `needle` as a run of letters.
fn contains(haystack: &[char], needle: &[char]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The `max` of `candidates` nearest to `wanted`, closest first, however far: the close ones
/// of [`closest`] when there are any.
pub fn nearest<'a>(wanted: &str, candidates: &[&'a str], max: usize) -> Vec<&'a str> {
    let close = closest(wanted, candidates, max);
    if !close.is_empty() {
        return close;
    }
    let mut scored: Vec<(usize, &'a str)> = candidates
        .iter()
        .map(|&c| (distance(wanted, c), c))
        .collect();
    scored.sort_by_key(|&(d, c)| (d, c));
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_found_and_far_ones_not() {
        let keys = ["colors", "modes", "sizes", "linesCount", "sizes.fontSize"];
        assert_eq!(closest("colours", &keys, 3), ["colors"]);
        assert_eq!(closest("lines_count", &keys, 3), ["linesCount"]);
        assert!(closest("banana", &keys, 3).is_empty());
        let families = ["Noto Sans", "Noto Serif", "Inter", "Comic Neue"];
        assert_eq!(
            closest("noto sans", &families, 2),
            ["Noto Sans", "Noto Serif"]
        );
        assert_eq!(closest("Comic", &families, 2), ["Comic Neue"]);
        assert_eq!(nearest("Helvetica", &families, 2).len(), 2);
    }
}
