//! Compiles `proto/rocklake_catalog.proto` with the pure-Rust `protox` compiler
//! (no `protoc` needed on the build machine), generates prost types from it, and
//! saves the descriptor set for reflection-based row encoding.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time: a build script compiled in one checkout may be run for
    // another (a shared target directory), and `env!` would point it at the
    // first checkout's files.
    let proto_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let proto_file = proto_dir.join("rocklake_catalog.proto");
    println!("cargo:rerun-if-changed={}", proto_file.display());
    let descriptors = protox::compile([&proto_file], [&proto_dir])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let encoded = prost::Message::encode_to_vec(&descriptors);
    std::fs::write(out_dir.join("rocklake_catalog.bin"), encoded)?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
