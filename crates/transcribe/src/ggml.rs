//! The legacy whisper.cpp "ggml" model container: CTranslate2 conversion, header reading and a
//! structural check of a written file.
//!
//! Layout (little-endian i32 unless noted): magic, 11 hyperparameters, the mel filterbank
//! (`n_mel`, `n_fft`, f32 values), the vocabulary (`count`, then `len` + raw bytes each), then
//! tensors until EOF (`n_dims`, `name_len`, `type`, `ne[n_dims]` = numpy shape reversed, name,
//! data). whisper.cpp finds tensors by name, so their order is free.

use std::io::{Read, Write};
use std::path::Path;

use crate::ct2::Ct2Model;
use crate::error::{Error, Result};
use crate::{mel, vocab};

pub(crate) const MAGIC: u32 = 0x6767_6d6c;
const TYPE_F32: i32 = 0;
const TYPE_F16: i32 = 1;
const TYPE_Q8_0: i32 = 8;
/// ggml's q8_0 block: an f16 scale and 32 signed bytes.
const Q8_0_BLOCK: usize = 32;
const Q8_0_BLOCK_BYTES: usize = 2 + Q8_0_BLOCK;

/// How the big weight matrices are stored. Convolutions stay f16 and 1-D tensors f32 either
/// way, as whisper.cpp expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precision {
    F16,
    /// 8-bit blocks of 32 with an f16 scale each: half the size, and on CPUs with 8-bit dot
    /// products the matrix products run faster.
    Q8_0,
}

impl Precision {
    /// The header's `ftype`: whisper.cpp's `ggml_ftype`, plus the quantization format's
    /// version times 1000 for quantized files.
    fn ftype(self) -> i32 {
        match self {
            Self::F16 => 1,
            Self::Q8_0 => 2 * 1000 + 7,
        }
    }
}
/// whisper.cpp rebuilds every special and timestamp token itself; the file carries the BPE
/// tokens plus `<|endoftext|>` (for multilingual models an empty id 50256 comes first).
const STORED_VOCAB: usize = 50_257;

/// The model hyperparameters as stored in a ggml file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hparams {
    pub(crate) n_vocab: usize,
    pub(crate) n_audio_ctx: usize,
    pub(crate) n_audio_state: usize,
    pub(crate) n_audio_head: usize,
    pub(crate) n_audio_layer: usize,
    pub(crate) n_text_ctx: usize,
    pub(crate) n_text_state: usize,
    pub(crate) n_text_head: usize,
    pub(crate) n_text_layer: usize,
    pub(crate) n_mels: usize,
    pub(crate) ftype: i32,
}

impl Hparams {
    /// whisper.cpp treats a model as multilingual from this vocabulary size on.
    pub(crate) fn is_multilingual(&self) -> bool {
        self.n_vocab >= 51_865
    }

    pub(crate) fn expected_tensor_count(&self) -> usize {
        11 + 15 * self.n_audio_layer + 24 * self.n_text_layer
    }

    fn to_ints(self) -> [i32; 11] {
        let n = |v: usize| v as i32;
        [
            n(self.n_vocab),
            n(self.n_audio_ctx),
            n(self.n_audio_state),
            n(self.n_audio_head),
            n(self.n_audio_layer),
            n(self.n_text_ctx),
            n(self.n_text_state),
            n(self.n_text_head),
            n(self.n_text_layer),
            n(self.n_mels),
            self.ftype,
        ]
    }
}

fn check_err(path: &Path, detail: impl Into<String>) -> Error {
    Error::Check {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

fn read_i32(reader: &mut impl Read, path: &Path) -> Result<i32> {
    let mut buf = [0u8; 4];
    reader
        .read_exact(&mut buf)
        .map_err(Error::io("reading", path))?;
    Ok(i32::from_le_bytes(buf))
}

fn read_count(reader: &mut impl Read, path: &Path, what: &str) -> Result<usize> {
    let value = read_i32(reader, path)?;
    usize::try_from(value).map_err(|_| check_err(path, format!("negative {what} {value}")))
}

/// Reads the magic and hyperparameters at the start of a ggml model file.
pub(crate) fn read_hparams(path: &Path) -> Result<Hparams> {
    let file = std::fs::File::open(path).map_err(Error::io("opening", path))?;
    let mut reader = std::io::BufReader::new(file);
    read_header(&mut reader, path)
}

fn read_header(reader: &mut impl Read, path: &Path) -> Result<Hparams> {
    let magic = read_i32(reader, path)? as u32;
    if magic != MAGIC {
        return Err(check_err(
            path,
            format!("magic {magic:#x} is not a ggml whisper model"),
        ));
    }
    let mut v = [0usize; 10];
    for slot in &mut v {
        *slot = read_count(reader, path, "hyperparameter")?;
    }
    let ftype = read_i32(reader, path)?;
    Ok(Hparams {
        n_vocab: v[0],
        n_audio_ctx: v[1],
        n_audio_state: v[2],
        n_audio_head: v[3],
        n_audio_layer: v[4],
        n_text_ctx: v[5],
        n_text_state: v[6],
        n_text_head: v[7],
        n_text_layer: v[8],
        n_mels: v[9],
        ftype,
    })
}

/// What [`check_file`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckReport {
    pub(crate) hparams: Hparams,
    pub(crate) tensors: usize,
    pub(crate) bytes: u64,
}

/// Walks a whole ggml file: header, filters, vocabulary, and every tensor's declared shape,
/// type and byte size, ending exactly at EOF with the tensor count whisper.cpp expects.
pub(crate) fn check_file(path: &Path) -> Result<CheckReport> {
    let file = std::fs::File::open(path).map_err(Error::io("opening", path))?;
    let bytes = file
        .metadata()
        .map_err(Error::io("reading metadata of", path))?
        .len();
    let mut reader = std::io::BufReader::new(file);
    let hparams = read_header(&mut reader, path)?;
    let mut consumed: u64 = 48;
    let skip = |reader: &mut std::io::BufReader<std::fs::File>,
                n: u64,
                consumed: &mut u64|
     -> Result<()> {
        let copied = std::io::copy(&mut reader.by_ref().take(n), &mut std::io::sink())
            .map_err(Error::io("reading", path))?;
        if copied != n {
            return Err(check_err(
                path,
                format!("truncated at byte {}", *consumed + copied),
            ));
        }
        *consumed += n;
        Ok(())
    };

    let n_mel = read_count(&mut reader, path, "n_mel")?;
    let n_fft = read_count(&mut reader, path, "n_fft")?;
    consumed += 8;
    if n_mel != hparams.n_mels || n_fft != mel::N_FREQ {
        return Err(check_err(path, format!("mel filters {n_mel}x{n_fft}")));
    }
    skip(&mut reader, (n_mel * n_fft * 4) as u64, &mut consumed)?;

    let n_tokens = read_count(&mut reader, path, "vocabulary size")?;
    consumed += 4;
    for _ in 0..n_tokens {
        let len = read_count(&mut reader, path, "token length")?;
        consumed += 4;
        skip(&mut reader, len as u64, &mut consumed)?;
    }

    let mut tensors = 0;
    while consumed < bytes {
        let n_dims = read_count(&mut reader, path, "n_dims")?;
        let name_len = read_count(&mut reader, path, "name length")?;
        let ttype = read_i32(&mut reader, path)?;
        consumed += 12;
        if !(1..=4).contains(&n_dims) || name_len > 256 {
            return Err(check_err(
                path,
                format!("tensor {tensors}: {n_dims} dims, name of {name_len} bytes"),
            ));
        }
        let mut elements: u64 = 1;
        let mut row: u64 = 0;
        for dim in 0..n_dims {
            let n = read_count(&mut reader, path, "tensor dimension")? as u64;
            if dim == 0 {
                row = n;
            }
            elements *= n;
            consumed += 4;
        }
        let mut name = vec![0u8; name_len];
        reader
            .read_exact(&mut name)
            .map_err(Error::io("reading", path))?;
        consumed += name_len as u64;
        let name = String::from_utf8_lossy(&name).into_owned();
        let data_bytes = match ttype {
            TYPE_F32 => elements * 4,
            TYPE_F16 => elements * 2,
            TYPE_Q8_0 if row.is_multiple_of(Q8_0_BLOCK as u64) => {
                elements / Q8_0_BLOCK as u64 * Q8_0_BLOCK_BYTES as u64
            }
            other => {
                return Err(check_err(
                    path,
                    format!("tensor {name}: type {other} with rows of {row}"),
                ));
            }
        };
        if n_dims == 1 && ttype != TYPE_F32 {
            return Err(check_err(path, format!("1-D tensor {name} must be f32")));
        }
        skip(&mut reader, data_bytes, &mut consumed)?;
        tensors += 1;
    }
    if consumed != bytes {
        return Err(check_err(
            path,
            format!("{} trailing bytes", consumed - bytes),
        ));
    }
    if tensors != hparams.expected_tensor_count() {
        return Err(check_err(
            path,
            format!(
                "{tensors} tensors, expected {}",
                hparams.expected_tensor_count()
            ),
        ));
    }
    Ok(CheckReport {
        hparams,
        tensors,
        bytes,
    })
}

enum TensorData {
    F32(Vec<f32>),
    F16(Vec<u16>),
    /// Already quantized q8_0 blocks, with the element count.
    Q8_0(Vec<u8>, usize),
}

/// Quantizes f16 values (a whole number of rows, each a multiple of 32 long) into q8_0 blocks:
/// each block of 32 is scaled so that its largest magnitude becomes 127, then rounded.
fn quantize_q8_0(bits: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bits.len() / Q8_0_BLOCK * Q8_0_BLOCK_BYTES);
    for block in bits.chunks_exact(Q8_0_BLOCK) {
        let values: Vec<f32> = block
            .iter()
            .map(|&b| half::f16::from_bits(b).to_f32())
            .collect();
        let amax = values.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = amax / 127.0;
        let inverse = if scale > 0.0 { 1.0 / scale } else { 0.0 };
        out.extend_from_slice(&half::f16::from_f32(scale).to_le_bytes());
        out.extend(values.iter().map(|v| ((v * inverse).round() as i8) as u8));
    }
    out
}

struct GgmlWriter<W: Write> {
    out: W,
    tensors: usize,
}

impl<W: Write> GgmlWriter<W> {
    fn ints(&mut self, values: &[i32]) -> std::io::Result<()> {
        for v in values {
            self.out.write_all(&v.to_le_bytes())?;
        }
        Ok(())
    }

    fn tensor(&mut self, name: &str, shape: &[usize], data: TensorData) -> std::io::Result<()> {
        let (ttype, len) = match &data {
            TensorData::F32(v) => (TYPE_F32, v.len()),
            TensorData::F16(v) => (TYPE_F16, v.len()),
            TensorData::Q8_0(_, len) => (TYPE_Q8_0, *len),
        };
        debug_assert_eq!(len, shape.iter().product::<usize>(), "{name}");
        self.ints(&[shape.len() as i32, name.len() as i32, ttype])?;
        let ne: Vec<i32> = shape.iter().rev().map(|&d| d as i32).collect();
        self.ints(&ne)?;
        self.out.write_all(name.as_bytes())?;
        let mut buf = Vec::with_capacity(len * 4);
        match data {
            TensorData::F32(v) => v
                .iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes())),
            TensorData::F16(v) => v
                .iter()
                .for_each(|x| buf.extend_from_slice(&x.to_le_bytes())),
            TensorData::Q8_0(v, _) => buf = v,
        }
        self.out.write_all(&buf)?;
        self.tensors += 1;
        Ok(())
    }
}

/// Reads CTranslate2 variables and writes them as ggml tensors with whisper.cpp's names.
struct Converter<'m, 'a, W: Write> {
    model: &'m Ct2Model<'a>,
    writer: GgmlWriter<W>,
    precision: Precision,
}

fn ct2_err(what: &str, detail: impl Into<String>) -> Error {
    Error::Ct2Format {
        what: what.to_owned(),
        detail: detail.into(),
    }
}

impl<W: Write> Converter<'_, '_, W> {
    fn write(&mut self, name: &str, shape: &[usize], data: TensorData) -> Result<()> {
        self.writer
            .tensor(name, shape, data)
            .map_err(|source| Error::Io {
                action: "writing tensor",
                path: name.into(),
                source,
            })
    }

    fn dims(&self, src: &str) -> Result<Vec<usize>> {
        Ok(self.model.get(src)?.dims.clone())
    }

    /// A 1-D tensor, or a tensor whisper.cpp wants in f32.
    fn f32_tensor(&mut self, src: &str, dst: &str, shape: Option<&[usize]>) -> Result<()> {
        let dims = self.dims(src)?;
        let values = self.model.f32_values(src)?;
        self.write(dst, shape.unwrap_or(&dims), TensorData::F32(values))
    }

    fn f16_tensor(&mut self, src: &str, dst: &str) -> Result<()> {
        let dims = self.dims(src)?;
        let bits = self.model.f16_bits(src)?;
        self.write(dst, &dims, TensorData::F16(bits))
    }

    /// A big weight matrix (`[rows, cols]`, given as f16 bits) in the model's precision.
    fn weight(&mut self, dst: &str, shape: &[usize], bits: Vec<u16>) -> Result<()> {
        let data = match self.precision {
            Precision::F16 => TensorData::F16(bits),
            Precision::Q8_0 => {
                let cols = shape.last().copied().unwrap_or(0);
                if !cols.is_multiple_of(Q8_0_BLOCK) {
                    return Err(ct2_err(
                        dst,
                        format!("rows of {cols} are not whole q8_0 blocks"),
                    ));
                }
                let len = bits.len();
                TensorData::Q8_0(quantize_q8_0(&bits), len)
            }
        };
        self.write(dst, shape, data)
    }

    fn weight_tensor(&mut self, src: &str, dst: &str) -> Result<()> {
        let dims = self.dims(src)?;
        let bits = self.model.f16_bits(src)?;
        self.weight(dst, &dims, bits)
    }

    fn linear(&mut self, src: &str, dst: &str) -> Result<()> {
        self.weight_tensor(&format!("{src}/weight"), &format!("{dst}.weight"))?;
        self.f32_tensor(&format!("{src}/bias"), &format!("{dst}.bias"), None)
    }

    fn layer_norm(&mut self, src: &str, dst: &str) -> Result<()> {
        self.f32_tensor(&format!("{src}/gamma"), &format!("{dst}.weight"), None)?;
        self.f32_tensor(&format!("{src}/beta"), &format!("{dst}.bias"), None)
    }

    /// Splits a fused projection (`[q;k;v]` or `[k;v]`) by rows into whisper.cpp's tensors,
    /// dropping the key bias, which Whisper does not have and CTranslate2 stores as zeros.
    fn fused(&mut self, src: &str, dst_prefix: &str, parts: &[&str]) -> Result<()> {
        let weight_name = format!("{src}/weight");
        let dims = self.dims(&weight_name)?;
        let [rows, cols] = dims[..] else {
            return Err(ct2_err(&weight_name, format!("shape {dims:?} is not 2-D")));
        };
        let d = rows / parts.len();
        if d * parts.len() != rows || d != cols {
            return Err(ct2_err(
                &weight_name,
                format!("shape {dims:?} is not {} x [D, D]", parts.len()),
            ));
        }
        let weight = self.model.f16_bits(&weight_name)?;
        let bias_name = format!("{src}/bias");
        let bias = self.model.f32_values(&bias_name)?;
        if bias.len() != rows {
            return Err(ct2_err(
                &bias_name,
                format!("{} values for {rows} rows", bias.len()),
            ));
        }
        for (i, part) in parts.iter().enumerate() {
            let rows = i * d..(i + 1) * d;
            let w = weight[rows.start * cols..rows.end * cols].to_vec();
            self.weight(&format!("{dst_prefix}.{part}.weight"), &[d, cols], w)?;
            let b = &bias[rows];
            if *part == "key" {
                if b.iter().any(|&x| x != 0.0) {
                    return Err(ct2_err(
                        &bias_name,
                        "key bias is not zero; ggml has no tensor for it",
                    ));
                }
            } else {
                self.write(
                    &format!("{dst_prefix}.{part}.bias"),
                    &[d],
                    TensorData::F32(b.to_vec()),
                )?;
            }
        }
        Ok(())
    }

    fn conv(&mut self, src: &str, dst: &str) -> Result<()> {
        self.f16_tensor(&format!("{src}/weight"), &format!("{dst}.weight"))?;
        let bias = format!("{src}/bias");
        let d = self.dims(&bias)?.iter().product::<usize>();
        // whisper.cpp wants conv biases as [D, 1] f32.
        self.f32_tensor(&bias, &format!("{dst}.bias"), Some(&[d, 1]))
    }

    fn attention_block(&mut self, src: &str, dst: &str) -> Result<()> {
        self.layer_norm(
            &format!("{src}/self_attention/layer_norm"),
            &format!("{dst}.attn_ln"),
        )?;
        self.fused(
            &format!("{src}/self_attention/linear_0"),
            &format!("{dst}.attn"),
            &["query", "key", "value"],
        )?;
        self.linear(
            &format!("{src}/self_attention/linear_1"),
            &format!("{dst}.attn.out"),
        )
    }

    fn ffn(&mut self, src: &str, dst: &str) -> Result<()> {
        self.layer_norm(&format!("{src}/ffn/layer_norm"), &format!("{dst}.mlp_ln"))?;
        self.linear(&format!("{src}/ffn/linear_0"), &format!("{dst}.mlp.0"))?;
        self.linear(&format!("{src}/ffn/linear_1"), &format!("{dst}.mlp.2"))
    }

    fn run(&mut self, hp: &Hparams) -> Result<()> {
        let pos = "encoder/position_encodings/encodings";
        self.f32_tensor(pos, "encoder.positional_embedding", None)?;
        self.conv("encoder/conv1", "encoder.conv1")?;
        self.conv("encoder/conv2", "encoder.conv2")?;
        for i in 0..hp.n_audio_layer {
            let (src, dst) = (format!("encoder/layer_{i}"), format!("encoder.blocks.{i}"));
            self.attention_block(&src, &dst)?;
            self.ffn(&src, &dst)?;
        }
        self.layer_norm("encoder/layer_norm", "encoder.ln_post")?;

        self.f32_tensor(
            "decoder/position_encodings/encodings",
            "decoder.positional_embedding",
            None,
        )?;
        // The output projection is an alias of this table; whisper.cpp reuses it too.
        self.weight_tensor(
            "decoder/embeddings/weight",
            "decoder.token_embedding.weight",
        )?;
        for i in 0..hp.n_text_layer {
            let (src, dst) = (format!("decoder/layer_{i}"), format!("decoder.blocks.{i}"));
            self.attention_block(&src, &dst)?;
            self.layer_norm(
                &format!("{src}/attention/layer_norm"),
                &format!("{dst}.cross_attn_ln"),
            )?;
            self.linear(
                &format!("{src}/attention/linear_0"),
                &format!("{dst}.cross_attn.query"),
            )?;
            self.fused(
                &format!("{src}/attention/linear_1"),
                &format!("{dst}.cross_attn"),
                &["key", "value"],
            )?;
            self.linear(
                &format!("{src}/attention/linear_2"),
                &format!("{dst}.cross_attn.out"),
            )?;
            self.ffn(&src, &dst)?;
        }
        self.layer_norm("decoder/layer_norm", "decoder.ln")
    }
}

/// Counts `prefix/layer_<digits>/` groups (not `encoder/layer_norm`).
fn count_layers(model: &Ct2Model<'_>, prefix: &str) -> usize {
    let mut layers: Vec<usize> = model
        .names()
        .filter_map(|name| name.strip_prefix(prefix)?.strip_prefix("/layer_"))
        .filter_map(|rest| rest.split('/').next()?.parse().ok())
        .collect();
    layers.sort_unstable();
    layers.dedup();
    layers.len()
}

fn hparams_of(model: &Ct2Model<'_>, precision: Precision) -> Result<Hparams> {
    let dim = |name: &str, axis: usize| -> Result<usize> {
        model
            .get(name)?
            .dims
            .get(axis)
            .copied()
            .ok_or_else(|| ct2_err(name, "has too few dimensions"))
    };
    let heads = |name: &str| -> Result<usize> {
        let value = model.get(name)?.scalar_int(name)?;
        usize::try_from(value).map_err(|_| ct2_err(name, format!("{value} heads")))
    };
    let hp = Hparams {
        n_vocab: dim("decoder/embeddings/weight", 0)?,
        n_audio_ctx: dim("encoder/position_encodings/encodings", 0)?,
        n_audio_state: dim("encoder/conv1/weight", 0)?,
        n_audio_head: heads("encoder/num_heads")?,
        n_audio_layer: count_layers(model, "encoder"),
        n_text_ctx: dim("decoder/position_encodings/encodings", 0)?,
        n_text_state: dim("decoder/embeddings/weight", 1)?,
        n_text_head: heads("decoder/num_heads")?,
        n_text_layer: count_layers(model, "decoder"),
        n_mels: dim("encoder/conv1/weight", 1)?,
        ftype: precision.ftype(),
    };
    if hp.n_audio_layer == 0 || hp.n_text_layer == 0 {
        return Err(ct2_err("layers", "no encoder or decoder layers found"));
    }
    Ok(hp)
}

/// Converts a CTranslate2 Whisper model (`model.bin` bytes + `vocabulary.txt`) into a ggml
/// model with its weight matrices in `precision`, written to `out`.
pub(crate) fn convert(
    model_bin: &[u8],
    vocabulary: &str,
    precision: Precision,
    out: impl Write,
) -> Result<Hparams> {
    let model = Ct2Model::parse(model_bin)?;
    if model.spec != "WhisperSpec" {
        return Err(ct2_err(
            "spec",
            format!("{:?} is not a Whisper model", model.spec),
        ));
    }
    let hp = hparams_of(&model, precision)?;
    let tokens = vocab::decode_vocabulary(vocabulary, STORED_VOCAB)?;
    let filters = mel::mel_filters(hp.n_mels);

    let io_err = |source| Error::Io {
        action: "writing",
        path: "ggml header".into(),
        source,
    };
    let mut writer = GgmlWriter { out, tensors: 0 };
    writer.ints(&[MAGIC as i32]).map_err(io_err)?;
    writer.ints(&hp.to_ints()).map_err(io_err)?;
    writer
        .ints(&[hp.n_mels as i32, mel::N_FREQ as i32])
        .map_err(io_err)?;
    let filter_bytes: Vec<u8> = filters.iter().flat_map(|w| w.to_le_bytes()).collect();
    writer.out.write_all(&filter_bytes).map_err(io_err)?;
    writer.ints(&[tokens.len() as i32]).map_err(io_err)?;
    for token in &tokens {
        writer.ints(&[token.len() as i32]).map_err(io_err)?;
        writer.out.write_all(token).map_err(io_err)?;
    }

    let mut converter = Converter {
        model: &model,
        writer,
        precision,
    };
    converter.run(&hp)?;
    if converter.writer.tensors != hp.expected_tensor_count() {
        return Err(ct2_err(
            "conversion",
            format!(
                "wrote {} tensors, expected {}",
                converter.writer.tensors,
                hp.expected_tensor_count()
            ),
        ));
    }
    converter.writer.out.flush().map_err(io_err)?;
    Ok(hp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dequantize(block: &[u8]) -> Vec<f32> {
        let scale = half::f16::from_le_bytes([block[0], block[1]]).to_f32();
        block[2..]
            .iter()
            .map(|&q| f32::from(q as i8) * scale)
            .collect()
    }

    #[test]
    fn q8_0_blocks_hold_their_values_within_half_a_step() {
        let values: Vec<f32> = (0..64).map(|i| ((i as f32) * 0.37).sin() * 0.8).collect();
        let bits: Vec<u16> = values
            .iter()
            .map(|&v| half::f16::from_f32(v).to_bits())
            .collect();
        let blocks = quantize_q8_0(&bits);
        assert_eq!(blocks.len(), 2 * Q8_0_BLOCK_BYTES);
        for (block, originals) in blocks
            .chunks(Q8_0_BLOCK_BYTES)
            .zip(values.chunks(Q8_0_BLOCK))
        {
            let amax = originals.iter().fold(0f32, |m, v| m.max(v.abs()));
            // The largest magnitude maps onto 127 (or -127).
            assert!(block[2..].iter().any(|&q| (q as i8).unsigned_abs() == 127));
            let step = amax / 127.0;
            for (got, want) in dequantize(block).iter().zip(originals) {
                assert!(
                    (got - want).abs() <= step * 0.5 + want.abs() * 2e-3,
                    "{got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn a_q8_0_block_of_zeros_has_a_zero_scale() {
        let blocks = quantize_q8_0(&[0u16; Q8_0_BLOCK]);
        assert_eq!(blocks, vec![0u8; Q8_0_BLOCK_BYTES]);
    }
}
