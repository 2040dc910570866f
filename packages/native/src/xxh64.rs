//! XXH64 (the reference algorithm from xxHash), one-shot and streaming.
//!
//! The streaming state round-trips through a fixed-size byte array so that JS can own
//! it (a `Uint8Array`) and no native object has to outlive a call.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline(always)]
fn read64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
}

#[inline(always)]
fn read32(b: &[u8], i: usize) -> u64 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as u64
}

#[inline(always)]
fn round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

#[inline(always)]
fn merge_round(acc: u64, val: u64) -> u64 {
    (acc ^ round(0, val)).wrapping_mul(P1).wrapping_add(P4)
}

#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// Consumes whole 32-byte stripes of `data`; returns how many bytes were consumed.
#[inline(always)]
fn stripes(v: &mut [u64; 4], data: &[u8]) -> usize {
    let mut i = 0;
    while i + 32 <= data.len() {
        v[0] = round(v[0], read64(data, i));
        v[1] = round(v[1], read64(data, i + 8));
        v[2] = round(v[2], read64(data, i + 16));
        v[3] = round(v[3], read64(data, i + 24));
        i += 32;
    }
    i
}

fn init_lanes(seed: u64) -> [u64; 4] {
    [
        seed.wrapping_add(P1).wrapping_add(P2),
        seed.wrapping_add(P2),
        seed,
        seed.wrapping_sub(P1),
    ]
}

fn converge(v: &[u64; 4]) -> u64 {
    let mut h = v[0]
        .rotate_left(1)
        .wrapping_add(v[1].rotate_left(7))
        .wrapping_add(v[2].rotate_left(12))
        .wrapping_add(v[3].rotate_left(18));
    for &lane in v {
        h = merge_round(h, lane);
    }
    h
}

/// Mixes the final `< 32` bytes into `h` and avalanches.
fn finish(mut h: u64, tail: &[u8]) -> u64 {
    let mut i = 0;
    while i + 8 <= tail.len() {
        h ^= round(0, read64(tail, i));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        i += 8;
    }
    if i + 4 <= tail.len() {
        h ^= read32(tail, i).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        i += 4;
    }
    while i < tail.len() {
        h ^= (tail[i] as u64).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
        i += 1;
    }
    avalanche(h)
}

/// XXH64 of `data` with `seed`.
pub fn xxh64(data: &[u8], seed: u64) -> u64 {
    let len = data.len();
    let (h, rest) = if len >= 32 {
        let mut v = init_lanes(seed);
        let used = stripes(&mut v, data);
        (converge(&v), &data[used..])
    } else {
        (seed.wrapping_add(P5), data)
    };
    finish(h.wrapping_add(len as u64), rest)
}

/// Writes `h` as 16 lowercase hex digits.
pub fn write_hex(h: u64, out: &mut [u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (k, slot) in out[..16].iter_mut().enumerate() {
        *slot = HEX[((h >> (60 - 4 * k)) & 0xf) as usize];
    }
}

/// Size of the serialized streaming state: seed, total length, 4 lanes, 32 buffered bytes,
/// buffered count (u32) and 4 bytes of padding.
pub const STATE_BYTES: usize = 8 + 8 + 32 + 32 + 8;

/// A streaming XXH64 hasher.
#[derive(Clone, Debug, PartialEq)]
pub struct Xxh64State {
    seed: u64,
    total: u64,
    v: [u64; 4],
    mem: [u8; 32],
    mem_len: usize,
}

impl Xxh64State {
    pub fn new(seed: u64) -> Self {
        Xxh64State {
            seed,
            total: 0,
            v: init_lanes(seed),
            mem: [0; 32],
            mem_len: 0,
        }
    }

    pub fn update(&mut self, mut data: &[u8]) {
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.mem_len + data.len() < 32 {
            self.mem[self.mem_len..self.mem_len + data.len()].copy_from_slice(data);
            self.mem_len += data.len();
            return;
        }
        if self.mem_len > 0 {
            let fill = 32 - self.mem_len;
            self.mem[self.mem_len..].copy_from_slice(&data[..fill]);
            let mem = self.mem;
            stripes(&mut self.v, &mem);
            data = &data[fill..];
            self.mem_len = 0;
        }
        let used = stripes(&mut self.v, data);
        let rest = &data[used..];
        self.mem[..rest.len()].copy_from_slice(rest);
        self.mem_len = rest.len();
    }

    /// The digest of everything fed so far; the state is unchanged.
    pub fn digest(&self) -> u64 {
        let h = if self.total >= 32 {
            converge(&self.v)
        } else {
            self.seed.wrapping_add(P5)
        };
        finish(h.wrapping_add(self.total), &self.mem[..self.mem_len])
    }

    pub fn to_bytes(&self, out: &mut [u8; STATE_BYTES]) {
        out[0..8].copy_from_slice(&self.seed.to_le_bytes());
        out[8..16].copy_from_slice(&self.total.to_le_bytes());
        for k in 0..4 {
            out[16 + 8 * k..24 + 8 * k].copy_from_slice(&self.v[k].to_le_bytes());
        }
        out[48..80].copy_from_slice(&self.mem);
        out[80..84].copy_from_slice(&(self.mem_len as u32).to_le_bytes());
        out[84..88].fill(0);
    }

    /// Reads a state written by [`Xxh64State::to_bytes`]; `None` if it cannot be one.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != STATE_BYTES {
            return None;
        }
        let mem_len = read32(b, 80) as usize;
        let total = read64(b, 8);
        if mem_len >= 32 || (total < 32 && total != mem_len as u64) {
            return None;
        }
        let mut mem = [0u8; 32];
        mem.copy_from_slice(&b[48..80]);
        Some(Xxh64State {
            seed: read64(b, 0),
            total,
            v: [read64(b, 16), read64(b, 24), read64(b, 32), read64(b, 40)],
            mem,
            mem_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testjson::{Json, read_golden};

    /// Builds a vector's input as described in fixtures/golden/xxh64.json.
    pub(crate) fn input_of(spec: &Json) -> Vec<u8> {
        if let Some(s) = spec.get("utf8") {
            return s.as_str().as_bytes().to_vec();
        }
        if let Some(h) = spec.get("hex") {
            let h = h.as_str().as_bytes();
            return h
                .chunks(2)
                .map(|c| u8::from_str_radix(std::str::from_utf8(c).unwrap(), 16).unwrap())
                .collect();
        }
        let p = spec.get("affine").expect("input kind");
        let (len, mul, add) = (p.at("length").as_u64(), p.at("mul").as_u64(), p.at("add").as_u64());
        (0..len).map(|i| ((i * mul + add) & 0xff) as u8).collect()
    }

    fn hex(h: u64) -> String {
        let mut b = [0u8; 16];
        write_hex(h, &mut b);
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn golden_vectors_one_shot_and_streaming() {
        let g = read_golden("xxh64.json");
        let vectors = g.at("vectors").as_array();
        assert!(vectors.len() >= 70);
        for v in vectors {
            let name = v.at("name").as_str();
            let data = input_of(v.at("input"));
            let seed: u64 = v.at("seed").as_str().parse().unwrap();
            let want = v.at("hash").as_str();
            assert_eq!(hex(xxh64(&data, seed)), want, "one-shot {name}");
            for chunk in [1usize, 3, 7, 31, 32, 33, 64, 1000] {
                let mut s = Xxh64State::new(seed);
                for c in data.chunks(chunk) {
                    s.update(c);
                }
                assert_eq!(hex(s.digest()), want, "streaming {name} chunk {chunk}");
            }
        }
    }

    #[test]
    fn known_reference_values() {
        assert_eq!(xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a", 0), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC_2CF5_AD77_0999);
    }

    #[test]
    fn digest_does_not_consume_and_state_round_trips() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        let mut s = Xxh64State::new(42);
        s.update(&data[..50]);
        assert_eq!(s.digest(), xxh64(&data[..50], 42));
        let mut buf = [0u8; STATE_BYTES];
        s.to_bytes(&mut buf);
        let mut t = Xxh64State::from_bytes(&buf).unwrap();
        assert_eq!(t, s);
        t.update(&data[50..]);
        assert_eq!(t.digest(), xxh64(&data, 42));
    }

    #[test]
    fn corrupt_state_is_refused() {
        let mut buf = [0u8; STATE_BYTES];
        Xxh64State::new(0).to_bytes(&mut buf);
        buf[80] = 32;
        assert!(Xxh64State::from_bytes(&buf).is_none());
        assert!(Xxh64State::from_bytes(&buf[..10]).is_none());
    }
}
