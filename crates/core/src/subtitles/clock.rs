//! Times as subtitle files write them.

/// Reads `HH:MM:SS,mmm`, `HH:MM:SS.mmm`, `MM:SS.mmm` (WebVTT may leave out hours) or ASS's
/// `H:MM:SS.cc`, in seconds.
pub(crate) fn parse_timestamp(s: &str) -> Option<f64> {
    let s = s.trim();
    let (clock, fraction) = match s.rfind([',', '.']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut seconds = 0.0;
    for part in &parts {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        seconds = seconds * 60.0 + part.parse::<f64>().ok()?;
    }
    if !fraction.is_empty() {
        if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
            return None;
        }
        seconds += fraction.parse::<f64>().ok()? / 10f64.powi(fraction.len() as i32);
    }
    Some(seconds)
}

/// `HH:MM:SS{separator}mmm`: SRT takes `,`, WebVTT `.`.
pub(crate) fn millisecond_clock(t_s: f64, separator: char) -> String {
    let ms = (t_s.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// ASS time: `H:MM:SS.cc`.
pub(crate) fn centisecond_clock(t_s: f64) -> String {
    let cs = (t_s.max(0.0) * 100.0).round() as u64;
    format!(
        "{}:{:02}:{:02}.{:02}",
        cs / 360_000,
        cs / 6000 % 60,
        cs / 100 % 60,
        cs % 100
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_round_to_their_unit() {
        assert_eq!(millisecond_clock(3725.0426, ','), "01:02:05,043");
        assert_eq!(millisecond_clock(0.5, '.'), "00:00:00.500");
        assert_eq!(centisecond_clock(61.005), "0:01:01.01");
    }

    #[test]
    fn timestamps_of_every_shape() {
        assert_eq!(parse_timestamp("01:02:05,043"), Some(3725.043));
        assert_eq!(parse_timestamp("02:05.5"), Some(125.5));
        assert_eq!(parse_timestamp("0:00:01.50"), Some(1.5));
        assert_eq!(parse_timestamp("00:xx:01.50"), None);
        assert_eq!(parse_timestamp("1:2:3:4"), None);
    }
}
