//! Reader for CTranslate2's `model.bin` (binary version 6).
//!
//! Layout, little-endian throughout: `u32 version | str spec | u32 revision | u32 n_vars |
//! n_vars × { str name | u8 rank | u32 dims[rank] | u8 dtype | u32 nbytes | data } |
//! u32 n_aliases × { str alias | str target }`, where a `str` is a u16 length counting a trailing
//! NUL, then the bytes and the NUL.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// Element type of a CTranslate2 variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dtype {
    F32,
    I8,
    I16,
    I32,
    F16,
    Bf16,
}

impl Dtype {
    fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::F32,
            1 => Self::I8,
            2 => Self::I16,
            3 => Self::I32,
            4 => Self::F16,
            5 => Self::Bf16,
            _ => return None,
        })
    }

    fn size_bytes(self) -> usize {
        match self {
            Self::I8 => 1,
            Self::I16 | Self::F16 | Self::Bf16 => 2,
            Self::F32 | Self::I32 => 4,
        }
    }
}

/// One variable: its shape and where its bytes sit in the file.
#[derive(Debug, Clone)]
pub(crate) struct Var<'a> {
    pub(crate) dims: Vec<usize>,
    pub(crate) dtype: Dtype,
    pub(crate) data: &'a [u8],
}

impl Var<'_> {
    pub(crate) fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// The value of a scalar integer variable (such as `encoder/num_heads`).
    pub(crate) fn scalar_int(&self, name: &str) -> Result<i64> {
        let bad = || format_err(name, "is not an integer scalar");
        if self.len() != 1 {
            return Err(bad());
        }
        Ok(match self.dtype {
            Dtype::I8 => i64::from(self.data[0] as i8),
            Dtype::I16 => i64::from(i16::from_le_bytes([self.data[0], self.data[1]])),
            Dtype::I32 => i64::from(i32::from_le_bytes(
                self.data[..4].try_into().map_err(|_| bad())?,
            )),
            _ => return Err(bad()),
        })
    }
}

/// A parsed `model.bin`: variables by name, aliases already resolved.
#[derive(Debug)]
pub(crate) struct Ct2Model<'a> {
    pub(crate) spec: String,
    vars: BTreeMap<String, Var<'a>>,
    aliases: BTreeMap<String, String>,
}

fn format_err(what: &str, detail: impl Into<String>) -> Error {
    Error::Ct2Format {
        what: what.to_owned(),
        detail: detail.into(),
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| {
                format_err(
                    "file",
                    format!("truncated while reading {what} at byte {}", self.pos),
                )
            })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let len = usize::from(self.u16(what)?);
        let raw = self.take(len, what)?;
        let text = raw
            .strip_suffix(&[0])
            .ok_or_else(|| format_err(what, "string without its NUL"))?;
        String::from_utf8(text.to_vec()).map_err(|_| format_err(what, "string is not UTF-8"))
    }
}

impl<'a> Ct2Model<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self> {
        let mut cur = Cursor { bytes, pos: 0 };
        let version = cur.u32("version")?;
        if version != 6 {
            return Err(format_err(
                "file",
                format!("binary version {version}, expected 6"),
            ));
        }
        let spec = cur.string("spec name")?;
        let _revision = cur.u32("spec revision")?;
        let n_vars = cur.u32("variable count")?;
        let mut vars = BTreeMap::new();
        for _ in 0..n_vars {
            let name = cur.string("variable name")?;
            let rank = cur.u8(&name)?;
            let dims = (0..rank)
                .map(|_| cur.u32(&name).map(|d| d as usize))
                .collect::<Result<Vec<_>>>()?;
            let code = cur.u8(&name)?;
            let dtype = Dtype::from_code(code)
                .ok_or_else(|| format_err(&name, format!("unknown dtype code {code}")))?;
            let nbytes = cur.u32(&name)? as usize;
            let expected = dims.iter().product::<usize>() * dtype.size_bytes();
            if nbytes != expected {
                return Err(format_err(
                    &name,
                    format!("{nbytes} bytes for shape {dims:?} {dtype:?}"),
                ));
            }
            let data = cur.take(nbytes, &name)?;
            vars.insert(name, Var { dims, dtype, data });
        }
        let n_aliases = cur.u32("alias count")?;
        let mut aliases = BTreeMap::new();
        for _ in 0..n_aliases {
            let alias = cur.string("alias")?;
            let target = cur.string("alias target")?;
            aliases.insert(alias, target);
        }
        Ok(Self {
            spec,
            vars,
            aliases,
        })
    }

    pub(crate) fn get(&self, name: &str) -> Result<&Var<'a>> {
        let resolved = self.aliases.get(name).map_or(name, String::as_str);
        self.vars
            .get(resolved)
            .ok_or_else(|| format_err(name, "missing"))
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// A float tensor as IEEE half bits, dequantising int8 (`…/weight` + `…/weight_scale`).
    ///
    /// f16 data is returned bit for bit, so an f16 model converts losslessly.
    pub(crate) fn f16_bits(&self, name: &str) -> Result<Vec<u16>> {
        let var = self.get(name)?;
        Ok(match var.dtype {
            Dtype::F16 => var
                .data
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect(),
            _ => self
                .f32_values(name)?
                .into_iter()
                .map(|v| half::f16::from_f32(v).to_bits())
                .collect(),
        })
    }

    /// A float tensor widened (or dequantised) to f32.
    pub(crate) fn f32_values(&self, name: &str) -> Result<Vec<f32>> {
        let var = self.get(name)?;
        match var.dtype {
            Dtype::F32 => Ok(var
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()),
            Dtype::F16 => Ok(var
                .data
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect()),
            Dtype::Bf16 => Ok(var
                .data
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect()),
            Dtype::I8 => {
                // CTranslate2 quantises per output row: scale = 127 / amax(row), so w = q / scale.
                let scales = self.f32_values(&format!("{name}_scale"))?;
                let rows = var.dims.first().copied().unwrap_or(1).max(1);
                if scales.len() != rows {
                    return Err(format_err(
                        name,
                        format!("{} scales for {rows} rows", scales.len()),
                    ));
                }
                let row_len = var.len() / rows;
                Ok(var
                    .data
                    .iter()
                    .enumerate()
                    .map(|(i, &q)| f32::from(q as i8) / scales[i / row_len])
                    .collect())
            }
            Dtype::I16 | Dtype::I32 => Err(format_err(
                name,
                "integer tensor where floats were expected",
            )),
        }
    }
}
