//! Grapheme-to-phoneme conversion for words the CMU dictionary lacks.
//!
//! This runs the network of the PyPI package `g2p-en` 2.1.0 (Kyubyong Park and Jongseok Kim,
//! Apache-2.0) on its released weights, `checkpoint20.npz`, which `scripts/setup-wheel-models` installs.
//! The network is a one-layer GRU encoder over the letters of a word followed by `</s>`, whose
//! last hidden state starts a one-layer GRU decoder; the decoder is fed `<s>`, then each phone
//! it picked, and picks greedily (argmax of a linear layer over its hidden state) until it emits
//! `</s>` or has emitted 20 phones, as `g2p_en.G2p.predict` does.
//!
//! The `.npz` file is a zip of `.npy` arrays; the loader reads only what this checkpoint holds:
//! little-endian `f32`, C order.

use crate::{Error, Result};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The encoder's input symbols, in the order of the checkpoint's embedding rows.
const GRAPHEMES: usize = 3 + 26;
/// Index of the grapheme `</s>`; `<pad>` is 0, `<unk>` 1 and `a`..`z` follow from 3.
const GRAPHEME_END: usize = 2;
const GRAPHEME_A: usize = 3;

/// The decoder's output symbols, in the order of the checkpoint's embedding and output rows,
/// stress digits removed (`UW` appears once without one in `g2p_en`'s list, as here).
const PHONEMES: [&str; 74] = [
    "<pad>", "<unk>", "<s>", "</s>", "AA", "AA", "AA", "AE", "AE", "AE", "AH", "AH", "AH", "AO",
    "AO", "AO", "AW", "AW", "AW", "AY", "AY", "AY", "B", "CH", "D", "DH", "EH", "EH", "EH", "ER",
    "ER", "ER", "EY", "EY", "EY", "F", "G", "HH", "IH", "IH", "IH", "IY", "IY", "IY", "JH", "K",
    "L", "M", "N", "NG", "OW", "OW", "OW", "OY", "OY", "OY", "P", "R", "S", "SH", "T", "TH", "UH",
    "UH", "UH", "UW", "UW", "UW", "UW", "V", "W", "Y", "Z", "ZH",
];
/// Decoder symbols that are not phones: `<pad>`, `<unk>` and `<s>` (never emitted in practice).
const FIRST_PHONE: usize = 4;
const PHONEME_START: usize = 2;
const PHONEME_END: usize = 3;

/// Most phones decoded for one word, as in `g2p_en` (the longest CMU entries have fewer).
const MAX_PHONES: usize = 20;

/// Most letters of one word fed to the encoder; the rest are dropped. Words this long are not
/// words (the network was trained on dictionary entries, and decodes at most 20 phones anyway),
/// and the cap bounds the time a pathological token can take.
const MAX_LETTERS: usize = 64;

/// File name of the checkpoint in the models folder, as `scripts/setup-wheel-models` installs it.
pub(crate) const FILE_NAME: &str = "g2p-en-checkpoint20.npz";

/// The `g2p-en` grapheme-to-phoneme network, loaded once and shared (it is `Send + Sync`).
pub struct G2p {
    /// Width of the embeddings.
    embed: usize,
    /// Width of the GRU states.
    hidden: usize,
    /// The encoder's input projection `W_ih · emb[g] + b_ih` for every grapheme `g`, row by row
    /// (`GRAPHEMES × 3·hidden`): the input is always an embedding row, so it is computed once.
    enc_input: Vec<f32>,
    enc_w_hh: Vec<f32>,
    enc_b_hh: Vec<f32>,
    /// The decoder's input projection for every phoneme, as `enc_input`.
    dec_input: Vec<f32>,
    dec_w_hh: Vec<f32>,
    dec_b_hh: Vec<f32>,
    /// Output layer, `PHONEMES × hidden`.
    fc_w: Vec<f32>,
    fc_b: Vec<f32>,
}

impl fmt::Debug for G2p {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("G2p")
            .field("embed", &self.embed)
            .field("hidden", &self.hidden)
            .finish_non_exhaustive()
    }
}

impl G2p {
    /// Where `scripts/setup-wheel-models` installs the checkpoint:
    /// `$CAPTIONS_MODELS/g2p-en-checkpoint20.npz`, else under `~/.cache/caption-engine/models`;
    /// `None` when neither variable is set.
    pub fn default_path() -> Option<PathBuf> {
        crate::models::models_dir().map(|dir| dir.join(FILE_NAME))
    }

    /// Loads `checkpoint20.npz` of `g2p-en` 2.1.0 (see [`G2p::default_path`]), checking that every
    /// array is there with the shapes the network needs.
    pub fn open(path: &Path) -> Result<G2p> {
        let model_error = |detail: String| Error::Model {
            path: path.to_owned(),
            detail,
        };
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            action: "opening",
            path: path.to_owned(),
            source,
        })?;
        let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file))
            .map_err(|err| model_error(format!("not a zip (.npz) file: {err}")))?;
        let mut array = |name: &str| -> Result<Array> {
            let mut bytes = Vec::new();
            archive
                .by_name(&format!("{name}.npy"))
                .map_err(|err| model_error(format!("{name}.npy: {err}")))?
                .read_to_end(&mut bytes)
                .map_err(|err| model_error(format!("reading {name}.npy: {err}")))?;
            parse_npy(&bytes).map_err(|detail| model_error(format!("{name}.npy: {detail}")))
        };

        let enc_emb = array("enc_emb")?;
        let enc_w_ih = array("enc_w_ih")?;
        let enc_w_hh = array("enc_w_hh")?;
        let enc_b_ih = array("enc_b_ih")?;
        let enc_b_hh = array("enc_b_hh")?;
        let dec_emb = array("dec_emb")?;
        let dec_w_ih = array("dec_w_ih")?;
        let dec_w_hh = array("dec_w_hh")?;
        let dec_b_ih = array("dec_b_ih")?;
        let dec_b_hh = array("dec_b_hh")?;
        let fc_w = array("fc_w")?;
        let fc_b = array("fc_b")?;

        let (embed, hidden) = match (enc_emb.shape.as_slice(), enc_w_hh.shape.as_slice()) {
            (&[_, embed], &[_, hidden]) if embed > 0 && hidden > 0 => (embed, hidden),
            _ => {
                return Err(model_error(format!(
                    "enc_emb has shape {:?} and enc_w_hh {:?}, expected two dimensions each",
                    enc_emb.shape, enc_w_hh.shape
                )));
            }
        };
        let gates = 3 * hidden;
        let expected: [(&str, &Array, &[usize]); 12] = [
            ("enc_emb", &enc_emb, &[GRAPHEMES, embed]),
            ("enc_w_ih", &enc_w_ih, &[gates, embed]),
            ("enc_w_hh", &enc_w_hh, &[gates, hidden]),
            ("enc_b_ih", &enc_b_ih, &[gates]),
            ("enc_b_hh", &enc_b_hh, &[gates]),
            ("dec_emb", &dec_emb, &[PHONEMES.len(), embed]),
            ("dec_w_ih", &dec_w_ih, &[gates, embed]),
            ("dec_w_hh", &dec_w_hh, &[gates, hidden]),
            ("dec_b_ih", &dec_b_ih, &[gates]),
            ("dec_b_hh", &dec_b_hh, &[gates]),
            ("fc_w", &fc_w, &[PHONEMES.len(), hidden]),
            ("fc_b", &fc_b, &[PHONEMES.len()]),
        ];
        for (name, array, shape) in expected {
            if array.shape != shape {
                return Err(model_error(format!(
                    "{name} has shape {:?}, expected {shape:?}",
                    array.shape
                )));
            }
        }

        let g2p = G2p {
            embed,
            hidden,
            enc_input: project_rows(&enc_emb.data, &enc_w_ih.data, &enc_b_ih.data, embed),
            enc_w_hh: enc_w_hh.data,
            enc_b_hh: enc_b_hh.data,
            dec_input: project_rows(&dec_emb.data, &dec_w_ih.data, &dec_b_ih.data, embed),
            dec_w_hh: dec_w_hh.data,
            dec_b_hh: dec_b_hh.data,
            fc_w: fc_w.data,
            fc_b: fc_b.data,
        };
        tracing::debug!(path = %path.display(), embed, hidden, "loaded the g2p network");
        Ok(g2p)
    }

    /// The ARPAbet phones of `word` without stress digits (`"nvidia"` → `V AH N D IY AH`, as
    /// `g2p_en` has it). Letters are lowercased and common Latin accents dropped (`é` → `e`);
    /// anything else that is not `a`–`z` is skipped. A word without letters gives no phones.
    ///
    /// ```
    /// use caption_align::G2p;
    ///
    /// let path = G2p::default_path().expect("HOME or CAPTIONS_MODELS is set");
    /// let g2p = G2p::open(&path)?; // installed by `make setup`
    /// assert_eq!(g2p.phones("nvidia").join(" "), "V AH N D IY AH");
    /// assert!(g2p.phones("123").is_empty());
    /// # Ok::<(), caption_align::Error>(())
    /// ```
    pub fn phones(&self, word: &str) -> Vec<String> {
        let letters: Vec<usize> = word
            .chars()
            .filter_map(fold_letter)
            .take(MAX_LETTERS)
            .map(|letter| GRAPHEME_A + usize::from(letter - b'a'))
            .collect();
        if letters.is_empty() {
            return Vec::new();
        }

        let gates = 3 * self.hidden;
        let mut h = vec![0.0f32; self.hidden];
        let mut scratch = vec![0.0f32; gates];
        for &grapheme in letters.iter().chain(&[GRAPHEME_END]) {
            let input = &self.enc_input[grapheme * gates..][..gates];
            gru_cell(input, &mut h, &self.enc_w_hh, &self.enc_b_hh, &mut scratch);
        }

        let mut phones = Vec::new();
        let mut previous = PHONEME_START;
        for _ in 0..MAX_PHONES {
            let input = &self.dec_input[previous * gates..][..gates];
            gru_cell(input, &mut h, &self.dec_w_hh, &self.dec_b_hh, &mut scratch);
            let best = argmax(
                self.fc_w
                    .chunks_exact(self.hidden)
                    .zip(&self.fc_b)
                    .map(|(row, bias)| dot(row, &h) + bias),
            );
            if best == PHONEME_END {
                break;
            }
            if best >= FIRST_PHONE {
                phones.push(PHONEMES[best].to_owned());
            }
            previous = best;
        }
        phones
    }
}

/// One step of a PyTorch-layout GRU cell (gates stacked r, z, n), `input` being `W_ih·x + b_ih`:
/// `r = σ(i_r + W_hr·h + b_hr)`, `z = σ(i_z + W_hz·h + b_hz)`,
/// `n = tanh(i_n + r ∘ (W_hn·h + b_hn))`, `h ← (1 − z) ∘ n + z ∘ h`.
fn gru_cell(input: &[f32], h: &mut [f32], w_hh: &[f32], b_hh: &[f32], scratch: &mut [f32]) {
    let hidden = h.len();
    for ((out, row), bias) in scratch.iter_mut().zip(w_hh.chunks_exact(hidden)).zip(b_hh) {
        *out = dot(row, h) + bias;
    }
    let (hh_rz, hh_n) = scratch.split_at(2 * hidden);
    let (in_rz, in_n) = input.split_at(2 * hidden);
    for j in 0..hidden {
        let r = sigmoid(in_rz[j] + hh_rz[j]);
        let z = sigmoid(in_rz[hidden + j] + hh_rz[hidden + j]);
        let n = (in_n[j] + r * hh_n[j]).tanh();
        h[j] = (1.0 - z) * n + z * h[j];
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Dot product with eight running sums, so the compiler can keep them in one vector register
/// (a single sum is a serial dependency chain it may not reorder).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len().min(b.len()));
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for (sum, (x, y)) in sums.iter_mut().zip(x.iter().zip(y)) {
            *sum += x * y;
        }
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    sums.iter().sum::<f32>() + rest
}

/// Index of the first largest value (numpy's `argmax`); 0 for an empty or all-NaN sequence.
fn argmax(values: impl Iterator<Item = f32>) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (index, value) in values.enumerate() {
        if value > best.1 {
            best = (index, value);
        }
    }
    best.0
}

/// `W · emb[i] + b` for every row `i` of `emb`, concatenated.
fn project_rows(emb: &[f32], w: &[f32], b: &[f32], embed: usize) -> Vec<f32> {
    emb.chunks_exact(embed)
        .flat_map(|x| {
            w.chunks_exact(embed)
                .zip(b)
                .map(|(row, bias)| dot(row, x) + bias)
        })
        .collect()
}

/// `c` as a lowercase ASCII letter, Latin-1 and a few Latin Extended-A accents dropped.
fn fold_letter(c: char) -> Option<u8> {
    let c = c.to_lowercase().next().unwrap_or(c);
    if c.is_ascii_lowercase() {
        return u8::try_from(c).ok();
    }
    let folded = match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'č' => 'c',
        'ď' => 'd',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => 'e',
        'ğ' => 'g',
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'ı' => 'i',
        'ł' => 'l',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => 'o',
        'ř' => 'r',
        'ś' | 'š' | 'ş' => 's',
        'ť' | 'ţ' => 't',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => 'u',
        'ý' | 'ÿ' => 'y',
        'ź' | 'ż' | 'ž' => 'z',
        _ => return None,
    };
    u8::try_from(folded).ok()
}

/// An `.npy` array of `f32`.
struct Array {
    shape: Vec<usize>,
    data: Vec<f32>,
}

/// Parses an `.npy` file (format versions 1 to 3) holding little-endian `f32` in C order.
fn parse_npy(bytes: &[u8]) -> Result<Array, String> {
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or("no .npy magic string")?;
    let (header_len, rest) = match rest {
        [1, _, a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        [2 | 3, _, a, b, c, d, rest @ ..] => {
            let len = u32::from_le_bytes([*a, *b, *c, *d]);
            (usize::try_from(len).map_err(|_| "header too long")?, rest)
        }
        [major, ..] => return Err(format!(".npy format version {major} is not supported")),
        [] => return Err("truncated before the version".into()),
    };
    if rest.len() < header_len {
        return Err("truncated header".into());
    }
    let (header, data) = rest.split_at(header_len);
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;

    let value = |key: &str| -> Result<&str, String> {
        let start = header
            .find(&format!("'{key}':"))
            .ok_or_else(|| format!("header has no '{key}': {header}"))?;
        Ok(header[start + key.len() + 3..].trim_start())
    };
    if !value("descr")?.starts_with("'<f4'") {
        return Err(format!("only little-endian f32 is supported: {header}"));
    }
    if !value("fortran_order")?.starts_with("False") {
        return Err(format!("only C order is supported: {header}"));
    }
    let shape = value("shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|shape| shape.split(')').next())
        .ok_or_else(|| format!("unreadable shape: {header}"))?;
    let shape = shape
        .split(',')
        .map(str::trim)
        .filter(|dim| !dim.is_empty())
        .map(|dim| dim.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("unreadable shape: {header}"))?;

    let count = shape
        .iter()
        .try_fold(1usize, |count, &dim| count.checked_mul(dim))
        .ok_or("shape overflows")?;
    if count.checked_mul(4) != Some(data.len()) {
        return Err(format!(
            "shape {shape:?} needs {count} f32 but the data has {} bytes",
            data.len()
        ));
    }
    let data = data
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok(Array { shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real checkpoint, loaded once for all tests; failing (not skipping) when the set-up
    /// has not run.
    fn checkpoint() -> &'static G2p {
        static G2P: std::sync::OnceLock<G2p> = std::sync::OnceLock::new();
        G2P.get_or_init(load_checkpoint)
    }

    fn load_checkpoint() -> G2p {
        let path = std::env::var_os("CAPTIONS_G2P")
            .map(PathBuf::from)
            .or_else(G2p::default_path)
            .expect("set CAPTIONS_G2P or HOME to find the g2p checkpoint");
        assert!(
            path.is_file(),
            "the g2p-en checkpoint is missing at {}: run scripts/setup-wheel-models (or `make setup`), \
             or point CAPTIONS_G2P at checkpoint20.npz",
            path.display()
        );
        G2p::open(&path).expect("loading the g2p checkpoint")
    }

    /// `g2p_en` 2.1.0's `G2p.predict` on the same checkpoint (numpy, the package's own code),
    /// stress digits removed. Most are not in the CMU dictionary; a few are, as a sanity check.
    const EXPECTED: &[(&str, &str)] = &[
        ("kubernetes", "K AH B ER N AH T S"),
        ("zelensky", "Z IH L EH N S K IY"),
        ("tiktok", "T IH K T AH K"),
        ("nvidia", "V AH N D IY AH"),
        ("chatgpt", "CH AE T P T"),
        ("covid", "K OW V IH D"),
        ("blockchain", "B L AA K HH EY N"),
        ("instagram", "IH N S T EH G R AE M"),
        ("youtube", "Y UW T UW B"),
        ("spotify", "S P AA T AH F AY"),
        ("elon", "IH L AO N"),
        ("musk", "M AH S K"),
        ("biden", "B AY D AH N"),
        ("zuckerberg", "Z AH K ER B ER G"),
        ("pokemon", "P OW K M AH N"),
        ("netflix", "N EH T F L IH K S"),
        ("airbnb", "EH R B N AH N"),
        ("uber", "Y UW B ER"),
        ("bitcoin", "B IH T K AH N"),
        ("ethereum", "EH TH R IY AH M"),
        ("openai", "OW P EY N AA"),
        ("deepfake", "D IY P F EY K"),
        ("selfie", "S EH L F IY"),
        ("podcast", "P OW D K AE S T"),
        ("emoji", "EH M OW JH IY"),
        ("hashtag", "HH AE SH T AH G"),
        ("livestream", "L AY V S R IY T"),
        ("metaverse", "M AH T AA V ER S"),
        ("crypto", "K R IH P T OW"),
        ("doordash", "D AO R D AA SH"),
        ("shopify", "SH OW P AH F AY"),
        ("kyiv", "K AY V"),
        ("xi", "Z IY"),
        ("beyonce", "B EY S AH N"),
        ("kardashian", "K AA D AH SH EY N"),
        ("rihanna", "R IH HH AA N AH"),
        ("huawei", "HH W AA W IY"),
        ("jinping", "JH IH N P IH NG"),
        ("hello", "HH EH L OW"),
        ("world", "W ER L D"),
        ("cat", "K AE T"),
        ("a", "AA"),
        ("activationist", "AE K T IH V EY SH AH N IH S T"),
        (
            "supercalifragilisticexpialidocious",
            "S UW P ER K AH F L AH JH AO S IY AH P S",
        ),
    ];

    #[test]
    fn reproduces_g2p_en() {
        let g2p = checkpoint();
        let mismatches: Vec<String> = EXPECTED
            .iter()
            .filter_map(|&(word, expected)| {
                let actual = g2p.phones(word).join(" ");
                (actual != expected).then(|| format!("{word}: {actual:?}, g2p_en {expected:?}"))
            })
            .collect();
        assert!(
            mismatches.is_empty(),
            "{} of {} words differ from g2p_en:\n{}",
            mismatches.len(),
            EXPECTED.len(),
            mismatches.join("\n")
        );
    }

    #[test]
    fn case_accents_and_non_letters() {
        let g2p = checkpoint();
        assert_eq!(g2p.phones("Kubernetes"), g2p.phones("kubernetes"));
        assert_eq!(g2p.phones("NVIDIA!"), g2p.phones("nvidia"));
        assert_eq!(g2p.phones("tik-tok"), g2p.phones("tiktok"));
        assert_eq!(g2p.phones("Beyoncé"), g2p.phones("beyonce"));
        assert_eq!(g2p.phones("Zelenskyy's")[..], g2p.phones("zelenskyys")[..]);
        for nothing in ["", " ", "123", "!?", "日本語", "\u{0}"] {
            assert!(g2p.phones(nothing).is_empty(), "{nothing:?}");
        }
        let long = "abc".repeat(10_000);
        assert!(g2p.phones(&long).len() <= MAX_PHONES);
    }

    #[test]
    fn is_send_sync_debug() {
        fn check<T: Send + Sync + fmt::Debug>() {}
        check::<G2p>();
    }

    #[test]
    fn rejects_what_is_not_a_checkpoint() {
        let missing = G2p::open(Path::new("/nonexistent/g2p.npz"));
        assert!(matches!(missing, Err(Error::Io { .. })), "{missing:?}");
        let dir = std::env::temp_dir().join(format!("caption-align-g2p-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let garbage = dir.join("garbage.npz");
        std::fs::write(&garbage, b"not a zip").expect("writing");
        let result = G2p::open(&garbage);
        assert!(matches!(result, Err(Error::Model { .. })), "{result:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn npy_headers() {
        let npy = |header: &str, data: &[u8]| {
            let mut header = header.to_owned();
            while !(10 + header.len() + 1).is_multiple_of(64) {
                header.push(' ');
            }
            header.push('\n');
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
            bytes.extend_from_slice(header.as_bytes());
            bytes.extend_from_slice(data);
            bytes
        };
        let data: Vec<u8> = [1.0f32, -2.5]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let array = parse_npy(&npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
            &data,
        ))
        .unwrap();
        assert_eq!((array.shape, array.data), (vec![2], vec![1.0, -2.5]));
        let array = parse_npy(&npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }",
            &data,
        ))
        .unwrap();
        assert_eq!(array.shape, [1, 2]);
        for bad in [
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }",
        ] {
            assert!(parse_npy(&npy(bad, &data)).is_err(), "{bad}");
        }
        for truncated in [&b""[..], b"\x93NUMPY", b"\x93NUMPY\x01\x00\xff\xff{"] {
            assert!(parse_npy(truncated).is_err());
        }
    }
}
