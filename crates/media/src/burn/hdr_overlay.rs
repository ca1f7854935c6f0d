//! Captions for a picture that stays HDR ([`BurnOptions::keep_hdr`](super::BurnOptions)):
//! an overlay's colours are SDR (BT.709 primaries, BT.1886 gamma, white at 100 %), and blended
//! as they are into a PQ picture their white would be PQ's 10,000 cd/m² peak. They are re-coded
//! here as the HDR signal of the same colour, white at graphics white (ITU-R BT.2408: 203 cd/m²
//! for PQ, 75 % signal for HLG), in BT.2020 primaries.

use std::sync::OnceLock;

use ffmpeg::color::TransferCharacteristic;
use ffmpeg_next as ffmpeg;

use crate::Result;
use crate::overlay::Overlay;

/// SDR white in an HDR picture, cd/m² (ITU-R BT.2408).
const GRAPHICS_WHITE_NITS: f64 = 203.0;
/// HLG's signal for graphics white (ITU-R BT.2408).
const HLG_GRAPHICS_WHITE_SIGNAL: f64 = 0.75;
/// Linear BT.709 RGB to linear BT.2020 RGB (ITU-R BT.2087).
const BT709_TO_BT2020: [[f64; 3]; 3] = [
    [0.6274, 0.3293, 0.0433],
    [0.0691, 0.9195, 0.0114],
    [0.0164, 0.0880, 0.8956],
];
/// Steps of the linear-light to signal table: finer than 8-bit output needs near black, where
/// PQ and HLG are steepest.
const ENCODE_STEPS: usize = 8192;

const HLG_A: f64 = 0.178_832_77;
const HLG_B: f64 = 0.284_668_92;
const HLG_C: f64 = 0.559_910_73;

/// PQ's signal (0 to 1) for `nits` cd/m² (SMPTE ST 2084's inverse EOTF).
fn pq_signal(nits: f64) -> f64 {
    let (m1, m2) = (2610.0 / 16384.0, 2523.0 / 4096.0 * 128.0);
    let (c1, c2, c3) = (
        3424.0 / 4096.0,
        2413.0 / 4096.0 * 32.0,
        2392.0 / 4096.0 * 32.0,
    );
    let y = (nits / 10_000.0).clamp(0.0, 1.0).powf(m1);
    ((c1 + c2 * y) / (1.0 + c3 * y)).powf(m2)
}

/// HLG's signal (0 to 1) for scene light `e` (0 to 1; ARIB STD-B67's OETF).
fn hlg_signal(e: f64) -> f64 {
    if e <= 1.0 / 12.0 {
        (3.0 * e.max(0.0)).sqrt()
    } else {
        HLG_A * (12.0 * e - HLG_B).ln() + HLG_C
    }
}

/// Lookup tables for one transfer: 8-bit SDR code to linear light (1 = white), and linear
/// light (0 to 1 in [`ENCODE_STEPS`]) to the 8-bit HDR signal.
struct Tables {
    linear: [f64; 256],
    encode: Vec<u8>,
}

impl Tables {
    fn new(transfer: TransferCharacteristic) -> Self {
        let linear = std::array::from_fn(|v| (v as f64 / 255.0).powf(2.4));
        // HLG's scene light at graphics white: the OETF inverted at its 75 % signal.
        let hlg_white = (((HLG_GRAPHICS_WHITE_SIGNAL - HLG_C) / HLG_A).exp() + HLG_B) / 12.0;
        let encode = (0..ENCODE_STEPS)
            .map(|i| {
                let light = i as f64 / (ENCODE_STEPS - 1) as f64;
                let signal = if transfer == TransferCharacteristic::SMPTE2084 {
                    pq_signal(light * GRAPHICS_WHITE_NITS)
                } else {
                    hlg_signal(light * hlg_white)
                };
                (signal * 255.0).round().clamp(0.0, 255.0) as u8
            })
            .collect();
        Self { linear, encode }
    }

    fn for_transfer(transfer: TransferCharacteristic) -> &'static Self {
        static PQ: OnceLock<Tables> = OnceLock::new();
        static HLG: OnceLock<Tables> = OnceLock::new();
        if transfer == TransferCharacteristic::SMPTE2084 {
            PQ.get_or_init(|| Self::new(transfer))
        } else {
            HLG.get_or_init(|| Self::new(transfer))
        }
    }

    /// One opaque SDR colour as the HDR signal.
    fn convert(&self, rgb: [u8; 3]) -> [u8; 3] {
        let linear = rgb.map(|c| self.linear[usize::from(c)]);
        BT709_TO_BT2020.map(|row| {
            let light = row[0] * linear[0] + row[1] * linear[1] + row[2] * linear[2];
            let index = (light.clamp(0.0, 1.0) * (ENCODE_STEPS - 1) as f64).round() as usize;
            self.encode[index]
        })
    }
}

/// `overlay` re-coded for a picture whose transfer is `transfer` (PQ or HLG), premultiplied
/// like the original.
pub(super) fn to_hdr_signal(
    overlay: &Overlay,
    transfer: TransferCharacteristic,
) -> Result<Overlay> {
    let tables = Tables::for_transfer(transfer);
    let mut rgba = overlay.rgba().to_vec();
    // Captions are a few flat colours: the last one converted is nearly always the next.
    let mut last: Option<([u8; 4], [u8; 4])> = None;
    for pixel in rgba.chunks_exact_mut(4) {
        let a = pixel[3];
        if a == 0 {
            continue;
        }
        let premultiplied = [pixel[0], pixel[1], pixel[2], a];
        if let Some((from, to)) = last
            && from == premultiplied
        {
            pixel.copy_from_slice(&to);
            continue;
        }
        let alpha = u32::from(a);
        let straight =
            [0, 1, 2].map(|c| ((u32::from(pixel[c]) * 255 + alpha / 2) / alpha).min(255) as u8);
        let signal = tables.convert(straight);
        let out = [
            ((u32::from(signal[0]) * alpha + 127) / 255) as u8,
            ((u32::from(signal[1]) * alpha + 127) / 255) as u8,
            ((u32::from(signal[2]) * alpha + 127) / 255) as u8,
            a,
        ];
        pixel.copy_from_slice(&out);
        last = Some((premultiplied, out));
    }
    Overlay::new(
        overlay.x(),
        overlay.y(),
        overlay.width(),
        overlay.height(),
        rgba,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_lands_on_graphics_white_and_black_stays_black() {
        let pq = Tables::for_transfer(TransferCharacteristic::SMPTE2084);
        // PQ's signal at 203 cd/m² is 0.5806: 148 of 255.
        assert_eq!(pq.convert([255, 255, 255]), [148; 3]);
        assert_eq!(pq.convert([0, 0, 0]), [0; 3]);
        let hlg = Tables::for_transfer(TransferCharacteristic::ARIB_STD_B67);
        assert_eq!(hlg.convert([255, 255, 255]), [191; 3]);
    }

    #[test]
    fn half_covered_pixels_stay_premultiplied() {
        let overlay = Overlay::new(0, 0, 2, 1, vec![128, 128, 128, 128, 0, 0, 0, 0]).unwrap();
        let hdr = to_hdr_signal(&overlay, TransferCharacteristic::SMPTE2084).unwrap();
        assert_eq!(hdr.rgba(), &[74, 74, 74, 128, 0, 0, 0, 0]);
    }
}
