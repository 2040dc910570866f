//! napi-rs's per-platform link arguments (macOS leaves the napi_* symbols for the loading
//! process to provide). Only the Linux build is exercised on this repository's CI; see
//! README.md, "Releasing".
fn main() {
    napi_build::setup();
}
