//! Writing a model as the tools do: a plan of one output handed to the output engine
//! ([`ggufkit::pipeline::execute`]), so every golden comparison checks the production path,
//! not a test-only writer.

use std::path::Path;

use ggufkit::ir::Model;
use ggufkit::pipeline::{
    self, ExecuteOptions, OutputPlan, PipelineError, ShardPlan, WriteOptions, WrittenOutput,
};

/// Writes `model` to `path` (one file, default write options) through the engine.
pub fn write_gguf(model: &Model, path: &Path) -> Result<WrittenOutput, PipelineError> {
    let plan = OutputPlan {
        shards: vec![ShardPlan {
            path: path.to_path_buf(),
            model: model.clone(),
        }],
        options: WriteOptions::default(),
    };
    let (results, _) = pipeline::execute(&[plan], &ExecuteOptions::default(), &());
    results
        .into_iter()
        .next()
        .unwrap_or_else(|| Err(PipelineError::Internal("no result for the output".into())))
}
