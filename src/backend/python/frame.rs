//! The host protocol's frames: a JSON header plus raw binary blobs, and tensors as blob
//! references (`{"dtype", "shape", "blob"}`) so values cross without a text round trip.
//!
//! Wire format, both directions: `u32` LE header length, the header's JSON, `u32` LE blob
//! count, then per blob a `u64` LE length and its bytes.

use crate::ir::{Buffer, DType, Tensor};
use serde_json::{json, Value};
use std::io::{self, Read, Write};

/// One message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// The JSON header.
    pub header: Value,
    /// Binary payloads the header refers to by index.
    pub blobs: Vec<Vec<u8>>,
}

impl Frame {
    /// A frame with `header` and no blobs yet.
    pub fn new(header: Value) -> Frame {
        Frame {
            header,
            blobs: Vec::new(),
        }
    }

    /// Appends `bytes` as a blob; returns its index.
    pub fn blob(&mut self, bytes: Vec<u8>) -> usize {
        self.blobs.push(bytes);
        self.blobs.len() - 1
    }

    /// Appends `tensor`'s little-endian buffer; returns its description for the header.
    pub fn tensor(&mut self, tensor: &Tensor) -> Value {
        let index = self.blob(tensor.data.to_le_bytes());
        json!({
            "dtype": tensor.data.dtype().numpy_name(),
            "shape": tensor.shape,
            "blob": index,
        })
    }

    /// The tensor `spec` (a header entry made by [`Frame::tensor`] or the host) describes.
    pub fn read_tensor(&self, spec: &Value) -> Result<Tensor, String> {
        let name = spec["dtype"].as_str().ok_or("tensor without dtype")?;
        let dtype = DType::ALL
            .iter()
            .copied()
            .find(|d| d.numpy_name() == name)
            .ok_or_else(|| format!("dtype {name} has no dlcfuzz counterpart"))?;
        let shape: Vec<usize> = serde_json::from_value(spec["shape"].clone())
            .map_err(|e| format!("tensor shape: {e}"))?;
        let blob = spec["blob"]
            .as_u64()
            .and_then(|b| self.blobs.get(b as usize))
            .ok_or("tensor blob index out of range")?;
        let data = Buffer::from_le_bytes(dtype, blob)
            .ok_or_else(|| format!("{} bytes are not a whole {name} buffer", blob.len()))?;
        if data.len() != shape.iter().product::<usize>() {
            return Err(format!("{} elements for shape {shape:?}", data.len()));
        }
        Ok(Tensor { data, shape })
    }

    /// Writes the frame.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let header = serde_json::to_vec(&self.header).expect("JSON values serialize");
        let mut out = Vec::with_capacity(header.len() + 8);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&(self.blobs.len() as u32).to_le_bytes());
        w.write_all(&out)?;
        for b in &self.blobs {
            w.write_all(&(b.len() as u64).to_le_bytes())?;
            w.write_all(b)?;
        }
        w.flush()
    }

    /// Reads one frame; `None` at a clean end of stream.
    pub fn read_from(r: &mut impl Read) -> io::Result<Option<Frame>> {
        let mut len = [0u8; 4];
        match r.read_exact(&mut len) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            other => other?,
        }
        let mut header = vec![0u8; u32::from_le_bytes(len) as usize];
        r.read_exact(&mut header)?;
        let header: Value = serde_json::from_slice(&header)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        r.read_exact(&mut len)?;
        let count = u32::from_le_bytes(len);
        let mut blobs = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let mut size = [0u8; 8];
            r.read_exact(&mut size)?;
            let mut blob = vec![0u8; u64::from_le_bytes(size) as usize];
            r.read_exact(&mut blob)?;
            blobs.push(blob);
        }
        Ok(Some(Frame { header, blobs }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_tensors_round_trip() {
        let mut frame = Frame::new(json!({"op": "x"}));
        let t = Tensor {
            data: Buffer::F32(vec![1.5, -2.0, 0.25, 8.0, 3.0, -0.5]),
            shape: vec![2, 3],
        };
        let spec = frame.tensor(&t);
        frame.header["t"] = spec.clone();
        let mut wire = Vec::new();
        frame.write_to(&mut wire).unwrap();
        let back = Frame::read_from(&mut wire.as_slice()).unwrap().unwrap();
        assert_eq!(back, frame);
        assert_eq!(back.read_tensor(&back.header["t"]).unwrap(), t);
        assert_eq!(Frame::read_from(&mut [].as_slice()).unwrap(), None);
    }

    #[test]
    fn bad_tensor_specs_are_errors() {
        let mut frame = Frame::new(json!({}));
        frame.blob(vec![0; 6]);
        let spec = json!({"dtype": "float32", "shape": [2], "blob": 0});
        assert!(frame
            .read_tensor(&spec)
            .unwrap_err()
            .contains("not a whole"));
        let spec = json!({"dtype": "complex64", "shape": [1], "blob": 0});
        assert!(frame.read_tensor(&spec).unwrap_err().contains("no dlcfuzz"));
        let spec = json!({"dtype": "int16", "shape": [2], "blob": 0});
        assert!(frame.read_tensor(&spec).unwrap_err().contains("elements"));
    }
}
