//! Link arguments the hand-declared N-API symbols (src/sys.rs) need on each OS. Linux needs
//! none: the symbols resolve from the `node` binary when the module loads.
//! Only the Linux build is exercised on this repository's CI; see README.md, "Releasing".
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CAIRN_NODE_LIB_DIR");
    match std::env::var("CARGO_CFG_TARGET_OS").as_deref() {
        // As napi-rs does: leave the napi_* symbols for the loading process to provide.
        Ok("macos") => {
            println!("cargo:rustc-cdylib-link-arg=-undefined");
            println!("cargo:rustc-cdylib-link-arg=dynamic_lookup");
        }
        // node.lib, the import library of node.exe, ships with Node's headers
        // (`npx node-gyp install` puts it under %LOCALAPPDATA%\node-gyp\Cache\<version>\x64).
        Ok("windows") => {
            if let Ok(dir) = std::env::var("CAIRN_NODE_LIB_DIR") {
                println!("cargo:rustc-link-search=native={dir}");
            }
            println!("cargo:rustc-link-lib=dylib=node");
        }
        _ => {}
    }
}
