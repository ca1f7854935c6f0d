//! How a written token is spoken, as lowercase dictionary words.
//!
//! The aligner looks for the spoken words in the audio while the caption keeps the written
//! token: `$25` is aligned as "twenty five dollars" and shown as `$25`. The reading chosen is
//! the most common American one; where speakers vary ("two fifty" or "two dollars fifty") one
//! is picked and the aligner has to tolerate the rest.
//!
//! Rules, in the order they apply:
//!
//! - Curly quotes and apostrophes become `'`, en and em dashes and the minus sign `-`, and the
//!   token is lowercased.
//! - Punctuation around the token is dropped (`"(10%)," ` → `10%`), as are leading `@` and `#`
//!   on words (`@handle`, `#topic`); kept are the symbols that are read (`$ € £ ¥ % + # °`, and a
//!   `-` or `.` right before a digit: `-5` is "minus five", `.5` "point five").
//! - Ordinary words come back as they are, apostrophes inside kept (`don't`).
//! - Abbreviations: `mr` mister, `mrs` missus, `dr` doctor, `jr` junior, `sr` senior, `prof`
//!   professor, `vs` versus, `etc` et cetera, `e.g.` for example, `i.e.` that is, `a.m.` / `p.m.`
//!   / `pm` the letters, `ph.d.` the letters, `c#` c sharp; dots optional. `st` is left alone
//!   (saint or street) and so is `am` (a word).
//! - Single letters between dots are spelled: `u.s.` → "u s".
//! - Symbols on their own: `&` and, `@` at, `+` plus, `=` equals, `%` percent, `°` degrees;
//!   `#1` is "number one". Inside a token they are read where they stand (`AT&T` → "at and t",
//!   `a@b.com` → "a at b dot com", a `.` between letters being "dot"); other symbols are dropped.
//! - Hyphens, slashes and underscores split words (`well-known` → "well known", `24/7` →
//!   "twenty four seven"); two numbers around one hyphen are a range (`5-10` → "five to ten",
//!   `$5-$10`, `1990-1995`, `10-20%`).
//! - Integers are read as cardinals without "and" (`1,000` and `1000000` alike), thousands
//!   separators only where the groups are three digits (`1,2,3` is read one number at a time).
//!   Integers of more than 15 digits, and any with a leading zero (`007`), are read digit by digit.
//! - A bare four-digit integer from 1100 to 2099 is a year: `1999` "nineteen ninety nine", `1900`
//!   "nineteen hundred", `1905` "nineteen oh five", `2005` "two thousand five", `2021` "twenty
//!   twenty one". With a separator (`1,999`) it is a quantity. Plurals read as plurals (`1990s`
//!   "nineteen nineties", `'80s` "eighties").
//! - Decimals: `3.5` "three point five", the digits after the point one by one; more points
//!   (`1.2.3`) are read "one point two point three".
//! - Ordinals: `1st` first, `21st` twenty first, `100th` one hundredth.
//! - Currencies before or after the amount (`$ € £ ¥`): `$1` one dollar, `$25` twenty five
//!   dollars, `$2.50` two dollars fifty, `$0.99` ninety nine cents, `£5` five pounds (pence),
//!   `€10` ten euros; `k m bn t` after a prefixed amount are thousand, million, billion, trillion
//!   (`$2.5bn` two point five billion dollars).
//! - Percent and degrees follow the number: `10%` "ten percent", `25°` "twenty five degrees".
//! - Times: `3:30` "three thirty", `3:05` "three oh five", `3:00` "three o'clock"; `am`/`pm` after
//!   a number or time are the letters (`3pm` "three p m", `3:00pm` "three p m").
//! - Letters glued to numbers are separate words: `5g` "five g", `covid19` "covid nineteen".
//! - Anything with nothing to say (punctuation, emoji) gives no words.

/// Integers with more digits than this are read digit by digit (this reads up to the hundreds
/// of trillions; beyond that nobody reads the number as a whole).
const MAX_CARDINAL_DIGITS: usize = 15;

/// The words `token` is spoken as, lowercase; empty when it has nothing speakable. These are
/// what [`Aligner::align`](crate::Aligner::align) looks for in the audio of a written token:
/// numbers, currencies, percentages, times, ordinals, years, abbreviations and symbols are read
/// the most common American way.
///
/// ```
/// use caption_align::spoken_words;
///
/// assert_eq!(spoken_words("$25"), ["twenty", "five", "dollars"]);
/// assert_eq!(spoken_words("1999"), ["nineteen", "ninety", "nine"]);
/// assert_eq!(spoken_words("3:30pm"), ["three", "thirty", "p", "m"]);
/// assert_eq!(spoken_words("Hello,"), ["hello"]);
/// assert!(spoken_words("—").is_empty());
/// ```
pub fn spoken_words(token: &str) -> Vec<String> {
    let normalized: String = token.chars().map(normalize_char).collect();
    let mut words = Vec::new();
    speak_token(&normalized.to_lowercase(), &mut words);
    words
}

fn normalize_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{02bc}' | '\u{2032}' => '\'',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
        _ => c,
    }
}

/// A letter of a word: alphabetic, non-ASCII digits (which this module does not read) and
/// combining marks (`i̇` from lowercasing `İ`).
fn is_letter(c: char) -> bool {
    (c.is_alphanumeric() && !c.is_ascii_digit()) || ('\u{300}'..='\u{36f}').contains(&c)
}

fn is_currency(c: char) -> bool {
    matches!(c, '$' | '€' | '£' | '¥')
}

/// `token` without the punctuation around it (see the module documentation).
fn trim_edges(token: &str) -> &str {
    let mut chars = token.char_indices().peekable();
    let mut start = token.len();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, next)| next);
        let before_digit = next.is_some_and(|next| next.is_ascii_digit());
        let kept = is_letter(c)
            || c.is_ascii_digit()
            || is_currency(c)
            || matches!(c, '&' | '+' | '=' | '%' | '°' | '#' | '@')
            || (matches!(c, '-' | '.') && before_digit);
        if kept {
            start = i;
            break;
        }
    }
    let token = &token[start..];
    let end = token
        .char_indices()
        .rev()
        .find(|&(_, c)| {
            is_letter(c)
                || c.is_ascii_digit()
                || is_currency(c)
                || matches!(c, '&' | '+' | '=' | '%' | '°' | '#' | '@')
        })
        .map_or(0, |(i, c)| i + c.len_utf8());
    &token[..end]
}

/// Fixed readings of whole tokens (after trimming and without their dots at the end).
fn fixed(token: &str) -> Option<&'static [&'static str]> {
    Some(match token {
        "mr" => &["mister"],
        "mrs" => &["missus"],
        "dr" => &["doctor"],
        "jr" => &["junior"],
        "sr" => &["senior"],
        "prof" => &["professor"],
        "vs" => &["versus"],
        "etc" => &["et", "cetera"],
        "e.g" => &["for", "example"],
        "i.e" => &["that", "is"],
        "a.m" => &["a", "m"],
        "p.m" | "pm" => &["p", "m"],
        "ph.d" => &["p", "h", "d"],
        "c#" => &["c", "sharp"],
        "&" => &["and"],
        "@" => &["at"],
        "+" => &["plus"],
        "=" => &["equals"],
        "%" => &["percent"],
        "°" => &["degrees"],
        _ => return None,
    })
}

fn speak_token(token: &str, out: &mut Vec<String>) {
    let token = trim_edges(token);
    if token.is_empty() {
        return;
    }
    if let Some(rest) = token.strip_prefix('-') {
        // `trim_edges` keeps a leading `-` only before a digit.
        out.push("minus".into());
        speak_token(rest, out);
        return;
    }
    if let Some((left, right)) = token.split_once('-') {
        let (left, right) = (trim_edges(left), trim_edges(right));
        if !right.contains('-') && is_number(left) && is_number(right) {
            speak_piece(left, out);
            out.push("to".into());
            speak_piece(right, out);
            return;
        }
    }
    if token.contains(['-', '/', '\\', '_']) {
        // Every part is shorter than `token`, so this ends.
        for part in token.split(['-', '/', '\\', '_']) {
            speak_token(part, out);
        }
        return;
    }
    speak_piece(token, out);
}

/// Whether `piece` reads as a number or a time (for ranges).
fn is_number(piece: &str) -> bool {
    !piece.is_empty() && (read_number_token(piece).is_some() || read_time(piece).is_some())
}

/// A token without hyphens, slashes or underscores.
fn speak_piece(piece: &str, out: &mut Vec<String>) {
    let piece = trim_edges(piece);
    if piece.is_empty() {
        return;
    }
    if piece.chars().all(|c| is_letter(c) || c == '\'') {
        match fixed(piece) {
            Some(words) => out.extend(words.iter().map(|&word| word.to_owned())),
            None => out.push(piece.to_owned()),
        }
        return;
    }
    if let Some(words) = fixed(piece) {
        out.extend(words.iter().map(|&word| word.to_owned()));
        return;
    }
    if let Some(rest) = piece.strip_prefix('@') {
        // A handle is said without the "at".
        out.extend(generic(rest));
        return;
    }
    if let Some(rest) = piece.strip_prefix('#') {
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            out.push("number".into());
        }
        speak_piece(rest, out);
        return;
    }
    if let Some(words) = read_time(piece).or_else(|| read_number_token(piece)) {
        out.extend(words);
        return;
    }
    if piece.contains('.')
        && piece
            .split('.')
            .all(|part| part.chars().count() == 1 && part.chars().all(is_letter))
    {
        out.extend(piece.split('.').map(str::to_owned));
        return;
    }
    out.extend(generic(piece));
}

/// Words, numbers and symbols one after another, read where they stand.
fn generic(piece: &str) -> Vec<String> {
    let chars: Vec<char> = piece.chars().collect();
    let mut words = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run_end = |from: usize, inside: &dyn Fn(usize) -> bool| {
            let mut end = from;
            while end < chars.len() && inside(end) {
                end += 1;
            }
            end
        };
        if is_letter(c) {
            let end = run_end(i, &|j| {
                is_letter(chars[j])
                    || (chars[j] == '\''
                        && chars.get(j + 1).is_some_and(|&next| is_letter(next))
                        && is_letter(chars[j - 1]))
            });
            words.push(chars[i..end].iter().collect());
            i = end;
        } else if c.is_ascii_digit() {
            let end = run_end(i, &|j| {
                chars[j].is_ascii_digit()
                    || (matches!(chars[j], ',' | '.')
                        && chars.get(j + 1).is_some_and(char::is_ascii_digit))
            });
            let run: String = chars[i..end].iter().collect();
            words.extend(read_numeral(&run, false));
            i = end;
        } else {
            let between_words = i > 0
                && chars.get(i + 1).is_some_and(|&next| next.is_alphanumeric())
                && chars[i - 1].is_alphanumeric();
            let word = match c {
                '&' => Some("and"),
                '@' => Some("at"),
                '+' => Some("plus"),
                '=' => Some("equals"),
                '%' => Some("percent"),
                '°' => Some("degrees"),
                '.' if between_words => Some("dot"),
                _ => None,
            };
            words.extend(word.map(str::to_owned));
            i += 1;
        }
    }
    words
}

/// `h:mm`, optionally followed by `am` or `pm`.
fn read_time(piece: &str) -> Option<Vec<String>> {
    let (hours, rest) = piece.split_once(':')?;
    let minutes = rest.get(..2)?;
    let meridiem = meridiem(rest.get(2..)?)?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(all_digits(hours) && hours.len() <= 2 && all_digits(minutes)) {
        return None;
    }
    let (hours, minutes): (u64, u64) = (hours.parse().ok()?, minutes.parse().ok()?);
    if hours > 24 || minutes > 59 {
        return None;
    }
    let mut words = cardinal(hours);
    match minutes {
        0 if meridiem.is_empty() => words.push("o'clock".into()),
        0 => {}
        1..=9 => {
            words.push("oh".into());
            words.extend(cardinal(minutes));
        }
        _ => words.extend(cardinal(minutes)),
    }
    words.extend(meridiem.iter().map(|&letter| letter.to_owned()));
    Some(words)
}

/// The letters of `am` or `pm` (dots optional), nothing for an empty suffix, `None` otherwise.
fn meridiem(suffix: &str) -> Option<&'static [&'static str]> {
    match suffix.trim_end_matches('.') {
        "" => Some(&[]),
        "am" | "a.m" => Some(&["a", "m"]),
        "pm" | "p.m" => Some(&["p", "m"]),
        _ => None,
    }
}

/// A number with what may come around it: a currency before or after, a multiplier after a
/// prefixed currency, `%`, `°`, and a suffix (ordinal, plural, am/pm, or letters).
fn read_number_token(piece: &str) -> Option<Vec<String>> {
    let mut rest = piece;
    let mut currency = rest.chars().next().filter(|&c| is_currency(c));
    if let Some(c) = currency {
        rest = &rest[c.len_utf8()..];
    }
    let body_len = numeral_len(rest);
    if body_len == 0 {
        return None;
    }
    let (body, mut rest) = rest.split_at(body_len);
    let is_integer = !body.contains('.');

    let mut multiplier = None;
    if currency.is_some() {
        let letters = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        multiplier = match &rest[..letters] {
            "k" | "thousand" => Some("thousand"),
            "m" | "mn" | "mil" | "million" => Some("million"),
            "b" | "bn" | "billion" => Some("billion"),
            "t" | "tn" | "trillion" => Some("trillion"),
            _ => None,
        };
        if multiplier.is_some() {
            rest = &rest[letters..];
        }
    } else if let Some(c) = rest.chars().next().filter(|&c| is_currency(c)) {
        currency = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    let percent = rest.starts_with('%');
    let degrees = rest.starts_with('°');
    rest = rest.trim_start_matches(['%', '°']);
    let plain = currency.is_none() && multiplier.is_none() && !percent && !degrees;

    let suffix = rest.strip_prefix('\'').unwrap_or(rest);
    let mut words;
    if plain && is_integer && matches!(suffix, "st" | "nd" | "rd" | "th") {
        words = read_numeral(body, false);
        ordinalize(&mut words);
        return Some(words);
    }
    if plain && is_integer && suffix == "s" {
        words = read_numeral(body, true);
        pluralize(&mut words);
        return Some(words);
    }
    if let Some(letters) = meridiem(rest) {
        words = match currency {
            Some(currency) => read_amount(body, multiplier, currency),
            None => read_numeral(body, plain && letters.is_empty()),
        };
        words.extend(letters.iter().map(|&letter| letter.to_owned()));
    } else if plain && rest.chars().all(is_letter) {
        words = read_numeral(body, false);
        words.push(rest.to_owned());
        return Some(words);
    } else {
        return None;
    }
    if percent {
        words.push("percent".into());
    }
    if degrees {
        words.push("degrees".into());
    }
    Some(words)
}

/// Length in bytes of the digits at the start of `s`, with `,` and `.` between digits, and a
/// leading `.` before a digit.
fn numeral_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let digit_next = bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
        match bytes[end] {
            b'0'..=b'9' => end += 1,
            b',' if end > 0 && digit_next => end += 1,
            b'.' if digit_next => end += 1,
            _ => break,
        }
    }
    end
}

/// An amount of money: `body` in `currency`, times `multiplier`.
fn read_amount(body: &str, multiplier: Option<&str>, currency: char) -> Vec<String> {
    let (one, many, cent, cents) = match currency {
        '€' => ("euro", "euros", "cent", "cents"),
        '£' => ("pound", "pounds", "penny", "pence"),
        '¥' => ("yen", "yen", "sen", "sen"),
        _ => ("dollar", "dollars", "cent", "cents"),
    };
    let int_part = body.split('.').next().unwrap_or(body);
    let groups_ok = thousands(int_part).is_some() || !int_part.contains(',');
    if let (Some((whole, fraction)), None, true) = (body.split_once('.'), multiplier, groups_ok)
        && fraction.len() == 2
        && fraction.bytes().all(|b| b.is_ascii_digit())
    {
        let whole = if whole.is_empty() { "0" } else { whole };
        let whole_value = integer_value(whole);
        let fraction_value = integer_value(fraction).unwrap_or(0);
        let mut words = Vec::new();
        if whole_value != Some(0) || fraction_value == 0 {
            words = read_numeral(whole, false);
            words.push(if whole_value == Some(1) { one } else { many }.into());
        }
        if fraction_value > 0 {
            words.extend(cardinal(fraction_value));
            if whole_value == Some(0) {
                words.push(if fraction_value == 1 { cent } else { cents }.into());
            }
        }
        return words;
    }
    let mut words = read_numeral(body, false);
    let singular = multiplier.is_none() && integer_value(body) == Some(1);
    words.extend(multiplier.map(str::to_owned));
    words.push(if singular { one } else { many }.into());
    words
}

/// The value of plain digits or of digits with valid thousands separators, when it is small
/// enough to read as a whole.
fn integer_value(digits: &str) -> Option<u64> {
    let digits = thousands(digits).unwrap_or_else(|| digits.to_owned());
    if digits.is_empty() || digits.len() > MAX_CARDINAL_DIGITS {
        return None;
    }
    digits.parse().ok()
}

/// `digits` without its thousands separators, when it has them and they are well placed.
fn thousands(digits: &str) -> Option<String> {
    let mut groups = digits.split(',');
    let first = groups.next()?;
    if !digits.contains(',') || first.is_empty() || first.len() > 3 {
        return None;
    }
    let mut plain = first.to_owned();
    for group in groups {
        if group.len() != 3 {
            return None;
        }
        plain.push_str(group);
    }
    plain.bytes().all(|b| b.is_ascii_digit()).then_some(plain)
}

/// Digits with optional thousands separators and decimal points. `year` allows reading a bare
/// four-digit integer as a year.
fn read_numeral(numeral: &str, year: bool) -> Vec<String> {
    let mut parts = numeral.split('.');
    let whole = parts.next().unwrap_or_default();
    let fractions: Vec<&str> = parts.collect();
    let mut words = if !whole.contains(',') {
        read_integer(whole, year && fractions.is_empty())
    } else if let Some(plain) = thousands(whole) {
        read_integer(&plain, false)
    } else {
        // Not thousands separators: a list of numbers (or a decimal comma, read the same way).
        return numeral
            .split(',')
            .flat_map(|part| read_numeral(part, false))
            .collect();
    };
    match fractions.as_slice() {
        [] => {}
        [fraction] => {
            words.push("point".into());
            words.extend(digit_by_digit(fraction));
        }
        _ => {
            for part in fractions {
                words.push("point".into());
                words.extend(read_integer(part, false));
            }
        }
    }
    words
}

fn read_integer(digits: &str, year: bool) -> Vec<String> {
    if digits.is_empty() {
        return Vec::new();
    }
    if digits.len() > MAX_CARDINAL_DIGITS || (digits.len() > 1 && digits.starts_with('0')) {
        return digit_by_digit(digits);
    }
    let Ok(value) = digits.parse::<u64>() else {
        return digit_by_digit(digits);
    };
    if year && digits.len() == 4 && (1100..=2099).contains(&value) {
        return read_year(value);
    }
    cardinal(value)
}

fn read_year(year: u64) -> Vec<String> {
    if (2000..=2009).contains(&year) {
        return cardinal(year);
    }
    let (century, rest) = (year / 100, year % 100);
    let mut words = cardinal(century);
    match rest {
        0 => words.push("hundred".into()),
        1..=9 => {
            words.push("oh".into());
            words.extend(cardinal(rest));
        }
        _ => words.extend(cardinal(rest)),
    }
    words
}

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

fn digit_by_digit(digits: &str) -> Vec<String> {
    digits
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| ONES[usize::from(b - b'0')].to_owned())
        .collect()
}

/// `value` in words, American style (no "and"), for values below 10^18.
fn cardinal(value: u64) -> Vec<String> {
    if value == 0 {
        return vec![ONES[0].to_owned()];
    }
    let mut words = Vec::new();
    let scales = [
        (1_000_000_000_000_000, "quadrillion"),
        (1_000_000_000_000, "trillion"),
        (1_000_000_000, "billion"),
        (1_000_000, "million"),
        (1_000, "thousand"),
        (1, ""),
    ];
    for (scale, name) in scales {
        let group = value / scale % 1000;
        if group == 0 {
            continue;
        }
        below_thousand(group, &mut words);
        if !name.is_empty() {
            words.push(name.to_owned());
        }
    }
    words
}

fn below_thousand(value: u64, words: &mut Vec<String>) {
    let (hundreds, rest) = (value / 100 % 10, value % 100);
    // Both indices are below 20 and 10 by the arithmetic above.
    let index = |n: u64| usize::try_from(n).unwrap_or(0);
    if hundreds > 0 {
        words.push(ONES[index(hundreds)].to_owned());
        words.push("hundred".into());
    }
    if rest >= 20 {
        words.push(TENS[index(rest / 10)].to_owned());
        if rest % 10 > 0 {
            words.push(ONES[index(rest % 10)].to_owned());
        }
    } else if rest > 0 {
        words.push(ONES[index(rest)].to_owned());
    }
}

/// Turns the last number word into its ordinal: one → first, twenty → twentieth.
fn ordinalize(words: &mut [String]) {
    let Some(last) = words.last_mut() else {
        return;
    };
    *last = match last.as_str() {
        "one" => "first".into(),
        "two" => "second".into(),
        "three" => "third".into(),
        "five" => "fifth".into(),
        "eight" => "eighth".into(),
        "nine" => "ninth".into(),
        "twelve" => "twelfth".into(),
        word => match word.strip_suffix('y') {
            Some(stem) => format!("{stem}ieth"),
            None => format!("{word}th"),
        },
    };
}

/// Turns the last number word into its plural: ninety → nineties, six → sixes.
fn pluralize(words: &mut [String]) {
    let Some(last) = words.last_mut() else {
        return;
    };
    *last = match last.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None if last.ends_with('x') => format!("{last}es"),
        None => format!("{last}s"),
    };
}

#[cfg(test)]
mod tests;
