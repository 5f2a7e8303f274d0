pub use sluice_compiler as compiler;
