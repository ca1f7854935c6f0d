pub mod audio;
pub mod models;
