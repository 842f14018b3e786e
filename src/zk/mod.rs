//! VOLE-based zero-knowledge engine (QuickSilver-style).
pub mod bench;
pub mod channel;
pub mod field;
pub mod gadgets;
pub mod ot;
pub mod prg;
pub mod prp;
pub mod quicksilver;
