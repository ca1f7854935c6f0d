//! CSS weights (100–900) against fontconfig's weight scale (0–215), which is not linear.

/// (fontconfig, CSS) pairs from fontconfig's FC_WEIGHT_* constants and their OpenType classes.
const POINTS: [(f32, f32); 12] = [
    (0.0, 100.0),
    (40.0, 200.0),
    (50.0, 300.0),
    (55.0, 350.0),
    (75.0, 380.0),
    (80.0, 400.0),
    (100.0, 500.0),
    (180.0, 600.0),
    (200.0, 700.0),
    (205.0, 800.0),
    (210.0, 900.0),
    (215.0, 950.0),
];

fn interpolate(x: f32, from: impl Fn(&(f32, f32)) -> f32, to: impl Fn(&(f32, f32)) -> f32) -> f32 {
    let first = POINTS[0];
    let last = POINTS[POINTS.len() - 1];
    if x <= from(&first) {
        return to(&first);
    }
    for pair in POINTS.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if x <= from(b) {
            let t = (x - from(a)) / (from(b) - from(a));
            return to(a) + t * (to(b) - to(a));
        }
    }
    to(&last)
}

/// The CSS weight (100–950) of a fontconfig weight (0–215); weights between fontconfig's named
/// ones are interpolated.
///
/// ```
/// use caption_fonts::css_from_fontconfig_weight;
///
/// assert_eq!(css_from_fontconfig_weight(80), 400); // FC_WEIGHT_REGULAR
/// assert_eq!(css_from_fontconfig_weight(200), 700); // FC_WEIGHT_BOLD
/// ```
pub fn css_from_fontconfig_weight(fc: i32) -> u16 {
    interpolate(fc as f32, |p| p.0, |p| p.1).round() as u16
}

/// The fontconfig weight (0–215) of a CSS weight (100–950): what a fontconfig pattern asks
/// for.
///
/// ```
/// assert_eq!(caption_fonts::fontconfig_from_css_weight(700), 200); // FC_WEIGHT_BOLD
/// ```
pub fn fontconfig_from_css_weight(css: u16) -> i32 {
    interpolate(f32::from(css), |p| p.1, |p| p.0).round() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_weights_map_both_ways() {
        for (fc, css) in [
            (0, 100),
            (50, 300),
            (80, 400),
            (100, 500),
            (180, 600),
            (200, 700),
            (205, 800),
            (210, 900),
        ] {
            assert_eq!(css_from_fontconfig_weight(fc), css);
            assert_eq!(fontconfig_from_css_weight(css), fc);
        }
        assert_eq!(css_from_fontconfig_weight(-5), 100);
        assert_eq!(css_from_fontconfig_weight(1000), 950);
    }
}
