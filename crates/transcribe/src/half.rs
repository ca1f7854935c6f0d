//! IEEE 754 half precision, the two conversions the model converter needs.

/// Widens half bits to f32 exactly (every half value is representable in f32).
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exp = u32::from((bits >> 10) & 0x1f);
    let mant = u32::from(bits & 0x03ff);
    let magnitude = match (exp, mant) {
        (0, 0) => 0,
        // Subnormal half: value = mant * 2^-24, exact in f32.
        (0, _) => {
            let value = mant as f32 * f32::powi(2.0, -24);
            return if sign == 0 { value } else { -value };
        }
        (0x1f, 0) => 0x7f80_0000,
        (0x1f, _) => 0x7fc0_0000 | (mant << 13),
        _ => ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(sign | magnitude)
}

/// Narrows f32 to half bits, rounding to nearest, ties to even (what numpy's astype does).
pub(crate) fn f32_to_f16(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x007f_ffff;
    if exp == 0xff {
        let nan_bit = if mant != 0 { 0x0200 } else { 0 };
        return sign | 0x7c00 | nan_bit;
    }
    let half_exp = exp - 127 + 15;
    if half_exp >= 0x1f {
        return sign | 0x7c00;
    }
    if half_exp <= 0 {
        if half_exp < -10 {
            return sign;
        }
        // Subnormal: shift the full significand (with its implicit 1) into place and round.
        let full = mant | 0x0080_0000;
        let shift = (14 - half_exp) as u32;
        let rounded = round_shift(full, shift);
        return sign | rounded as u16;
    }
    let rounded = round_shift(mant, 13);
    // A carry out of the mantissa correctly bumps the exponent (and can reach infinity).
    sign | ((((half_exp as u32) << 10) + rounded) as u16)
}

fn round_shift(value: u32, shift: u32) -> u32 {
    let truncated = value >> shift;
    let remainder = value & ((1 << shift) - 1);
    let halfway = 1 << (shift - 1);
    if remainder > halfway || (remainder == halfway && truncated & 1 == 1) {
        truncated + 1
    } else {
        truncated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_finite_half_round_trips() {
        for bits in 0..=u16::MAX {
            let exp = (bits >> 10) & 0x1f;
            if exp == 0x1f {
                continue;
            }
            assert_eq!(f32_to_f16(f16_to_f32(bits)), bits, "bits {bits:#06x}");
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f32_to_f16(65520.0), 0x7c00, "rounds up to infinity");
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00, "tie goes to even");
        assert_eq!(
            f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)),
            0x3c02,
            "tie goes to even"
        );
        assert!(f16_to_f32(0x7e00).is_nan());
    }
}
