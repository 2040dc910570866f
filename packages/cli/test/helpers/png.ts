/** A minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what Chromium writes), on node:zlib only. */
import { inflateSync } from 'node:zlib';

/** Decoded pixels: `channels` bytes per pixel, row-major. */
export interface DecodedPng {
  readonly width: number;
  readonly height: number;
  readonly channels: number;
  readonly pixels: Uint8Array;
}

export function decodePng(bytes: Uint8Array): DecodedPng {
  const buf = Buffer.from(bytes);
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      colorType = data[9] as number;
      if (depth !== 8 || data[12] !== 0 || (colorType !== 2 && colorType !== 6)) throw new Error(`unsupported PNG (depth ${depth}, colour type ${colorType})`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const channels = colorType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? (out[x - channels] as number) : 0;
      const b = prev[x] as number;
      const c = x >= channels ? (prev[x - channels] as number) : 0;
      const v = line[x] as number;
      let r: number;
      switch (filter) {
        case 0: r = v; break;
        case 1: r = v + a; break;
        case 2: r = v + b; break;
        case 3: r = v + ((a + b) >> 1); break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          r = v + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default: throw new Error(`bad PNG filter ${filter}`);
      }
      out[x] = r & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** Pixels differing from `background` (RGB) by more than `tolerance` on any channel. */
export function countNonBackground(png: DecodedPng, background: readonly [number, number, number], tolerance = 8): number {
  let n = 0;
  const { pixels, channels } = png;
  for (let i = 0; i < pixels.length; i += channels) {
    if (Math.abs((pixels[i] as number) - background[0]) > tolerance || Math.abs((pixels[i + 1] as number) - background[1]) > tolerance || Math.abs((pixels[i + 2] as number) - background[2]) > tolerance) n++;
  }
  return n;
}

/** Pixels within `tolerance` of a `#rrggbb` colour. */
export function countColor(png: DecodedPng, hex: string, tolerance = 6): number {
  const rgb = [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)) as [number, number, number];
  let n = 0;
  const { pixels, channels } = png;
  for (let i = 0; i < pixels.length; i += channels) {
    if (Math.abs((pixels[i] as number) - rgb[0]) <= tolerance && Math.abs((pixels[i + 1] as number) - rgb[1]) <= tolerance && Math.abs((pixels[i + 2] as number) - rgb[2]) <= tolerance) n++;
  }
  return n;
}

/** A rectangle in pixels. */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** Pixels within `tolerance` of a `#rrggbb` colour inside `rect` (clipped to the image). */
export function countColorIn(png: DecodedPng, hex: string, rect: Rect, tolerance = 40): number {
  const rgb = [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)) as [number, number, number];
  const { pixels, channels, width, height } = png;
  let n = 0;
  for (let y = Math.max(0, Math.floor(rect.y)); y < Math.min(height, Math.ceil(rect.y + rect.h)); y++) {
    for (let x = Math.max(0, Math.floor(rect.x)); x < Math.min(width, Math.ceil(rect.x + rect.w)); x++) {
      const i = (y * width + x) * channels;
      if (Math.abs((pixels[i] as number) - rgb[0]) <= tolerance && Math.abs((pixels[i + 1] as number) - rgb[1]) <= tolerance && Math.abs((pixels[i + 2] as number) - rgb[2]) <= tolerance) n++;
    }
  }
  return n;
}
