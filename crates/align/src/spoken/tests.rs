use super::*;

#[track_caller]
fn says(token: &str, expected: &str) {
    assert_eq!(spoken_words(token).join(" "), expected, "{token:?}");
}

#[test]
fn words() {
    says("Hello", "hello");
    says("don't", "don't");
    says("Don’t,", "don't");
    says("\"quoted\"", "quoted");
    says("(parenthetical)", "parenthetical");
    says("dogs'", "dogs");
    says("well-known", "well known");
    says("state-of-the-art", "state of the art");
    says("and/or", "and or");
    says("snake_case", "snake case");
    says("word—word", "word word");
    says("Zoë", "zoë");
    says("İstanbul", "i\u{307}stanbul");
    says("am", "am");
    says("st.", "st");
    says("#hashtag", "hashtag");
    says("@handle", "handle");
}

#[test]
fn abbreviations_and_symbols() {
    says("Mr.", "mister");
    says("Mrs", "missus");
    says("Dr.", "doctor");
    says("etc.", "et cetera");
    says("e.g.", "for example");
    says("i.e.,", "that is");
    says("a.m.", "a m");
    says("P.M.", "p m");
    says("U.S.", "u s");
    says("Ph.D.", "p h d");
    says("C#", "c sharp");
    says("C++", "c plus plus");
    says("AT&T", "at and t");
    says("john@example.com", "john at example dot com");
    says("&", "and");
    says("@", "at");
    says("+", "plus");
    says("=", "equals");
    says("2+2=4", "two plus two equals four");
    says("#1", "number one");
    says("#1.", "number one");
}

#[test]
fn integers_and_years() {
    says("0", "zero");
    says("7", "seven");
    says("25", "twenty five");
    says("100", "one hundred");
    says("105", "one hundred five");
    says("1,000", "one thousand");
    says("1000", "one thousand");
    says("1,999", "one thousand nine hundred ninety nine");
    says(
        "12,345,678",
        "twelve million three hundred forty five thousand six hundred seventy eight",
    );
    says("1000000", "one million");
    says("1,2,3", "one two three");
    says("007", "zero zero seven");
    says("2021", "twenty twenty one");
    says("1999", "nineteen ninety nine");
    says("1900", "nineteen hundred");
    says("1905", "nineteen oh five");
    says("2000", "two thousand");
    says("2005", "two thousand five");
    says("2010", "twenty ten");
    says("1990s", "nineteen nineties");
    says("'80s", "eighties");
    says("’90s", "nineties");
    says(
        "1234567890123456",
        "one two three four five six seven eight nine zero one two three four five six",
    );
    says(
        "999999999999999",
        "nine hundred ninety nine trillion nine hundred ninety nine billion nine hundred ninety nine million nine hundred ninety nine thousand nine hundred ninety nine",
    );
    says("-5", "minus five");
    says("3:30-4:30", "three thirty to four thirty");
    says("−3.5", "minus three point five");
}

#[test]
fn decimals_ordinals_ranges() {
    says("3.5", "three point five");
    says("3.14", "three point one four");
    says(".5", "point five");
    says("0.25", "zero point two five");
    says("1.2.3", "one point two point three");
    says(
        "1,234.56",
        "one thousand two hundred thirty four point five six",
    );
    says("1st", "first");
    says("2nd", "second");
    says("3rd", "third");
    says("21st", "twenty first");
    says("12th", "twelfth");
    says("40th", "fortieth");
    says("100th", "one hundredth");
    says("5-10", "five to ten");
    says("5–10", "five to ten");
    says("1990-1995", "nineteen ninety to nineteen ninety five");
    says("10-20%", "ten to twenty percent");
    says("$5-$10", "five dollars to ten dollars");
    says("24/7", "twenty four seven");
    says("covid-19", "covid nineteen");
    says(
        "555-123-4567",
        "five hundred fifty five one hundred twenty three four thousand five hundred sixty seven",
    );
}

#[test]
fn money_percent_times() {
    says("$25", "twenty five dollars");
    says("$25,", "twenty five dollars");
    says("$1", "one dollar");
    says("$1.00", "one dollar");
    says("$2.50", "two dollars fifty");
    says("$2.05", "two dollars five");
    says("$0.99", "ninety nine cents");
    says("$.01", "one cent");
    says("$1,000", "one thousand dollars");
    says("$1,000.50", "one thousand dollars fifty");
    says("$2.5bn", "two point five billion dollars");
    says("$10k", "ten thousand dollars");
    says("$1m", "one million dollars");
    says("$2021", "two thousand twenty one dollars");
    says("€10", "ten euros");
    says("10€", "ten euros");
    says("£5", "five pounds");
    says("£1.50", "one pound fifty");
    says("£0.50", "fifty pence");
    says("¥100", "one hundred yen");
    says("10%", "ten percent");
    says("(10%)", "ten percent");
    says("2.5%", "two point five percent");
    says("25°", "twenty five degrees");
    says("3:30", "three thirty");
    says("3:05", "three oh five");
    says("3:00", "three o'clock");
    says("15:45", "fifteen forty five");
    says("3:30pm", "three thirty p m");
    says("3:00pm", "three p m");
    says("3pm", "three p m");
    says("10a.m.", "ten a m");
    says("5g", "five g");
    says("covid19", "covid nineteen");
    says("mp3", "mp three");
}

#[test]
fn nothing_to_say() {
    for token in [
        "", " ", "...", "—", "-", "()", "\"", "'", "🙂", "$", "#", "--",
    ] {
        let words = spoken_words(token);
        assert!(words.is_empty(), "{token:?} -> {words:?}");
    }
}

#[test]
fn never_panics() {
    let huge = "9".repeat(10_000);
    let tricky = [
        "$", "$$", "$.", "$,", "$-", "-$", "-", "--5", "5--", "5-", "-.5", ".", "..5", "5..", "5.",
        "5,", ",5", "1,", "1,,000", "1,000,", "$1,00.5", "$1.5.5", "$1.234", "1:", ":30", "1:3",
        "99:99", "24:00", "3:30:15", "3:30xm", "1st-", "1st2nd", "5%%", "%5", "°°", "5°c", "#",
        "##1", "#-1", "@", "@1", "a.b.c.", ".a.", "a..b", "'", "''", "'s", "s'", "a'", "'a'b'",
        "e.g", "1e10", "0x1f", "١٢٣", "½", "²", "𝟙", "ǅ", "İ", "ß", "\u{0}", "\u{300}", "a\u{300}",
        "\u{feff}", "\t\n", "🙂5", "5🙂", "5🙂5", "$🙂", "€€10", "10€€", "$10k%", "$10kk", "10k",
        "$0", "$0.00", "$00.01", "0000", "2099s", "1100s", "1st s", "-0", "−", "–", "/", "\\", "_",
        "a/b/c", "1/2/3", "a-", "-a", "a--b",
    ];
    let mut inputs: Vec<String> = tricky.iter().map(|&s| s.to_owned()).collect();
    inputs.push(huge.clone());
    inputs.push(format!("${huge}"));
    inputs.push(format!("{huge}.{huge}"));
    inputs.push(format!("{huge}th"));
    inputs.push(format!("{huge}%"));
    inputs.push(format!("{huge}-{huge}"));
    inputs.push(format!("1,{}", "000,".repeat(2_000)));
    inputs.push("18446744073709551616".into());
    inputs.push("-".repeat(1_000));
    inputs.push("5-".repeat(1_000));
    for a in tricky {
        for b in ["", "5", "$", "%", "-", ".", "a", "th", "pm", "'"] {
            inputs.push(format!("{a}{b}"));
            inputs.push(format!("{b}{a}"));
        }
    }
    for input in &inputs {
        let words = spoken_words(input);
        for word in &words {
            assert!(!word.is_empty(), "{input:?} -> {words:?}");
            assert!(
                !word.contains(char::is_whitespace),
                "{input:?} -> {words:?}"
            );
            assert_eq!(*word, word.to_lowercase(), "{input:?} -> {words:?}");
        }
    }
    assert_eq!(spoken_words(&huge).len(), huge.len());
}
