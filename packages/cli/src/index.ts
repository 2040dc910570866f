/**
 * @cairn/cli — the `cairn` ops CLI as a library: the program, configuration, pipeline
 * loading and the graph/report renderers.
 */
export { createProgram, main } from './program.js';
export { defineConfig, loadConfig, findConfigFile, CONFIG_FILES } from './config.js';
export type { CairnConfig, ConfigFlags, ConfigSource, EffectiveConfig, ExecutorConfig, StepDefaults, StoreConfig } from './config.js';
export { loadPipeline, selectSteps, findSteps } from './pipeline.js';
export type { LoadedPipeline } from './pipeline.js';
export { ExitCode, exitCodeOf, formatError } from './errors.js';
export type { ExitCodeValue } from './errors.js';
export { buildGraphModel, STEP_STATES, STATE_COLORS, STATE_LABELS } from './graph/model.js';
export type { GraphModel, GraphNode, NodeFacts, StepState } from './graph/model.js';
export { renderDot } from './graph/dot.js';
export { renderMermaid } from './graph/mermaid.js';
export { renderGraphHtml } from './graph/html.js';
export type { GraphHtmlOptions } from './graph/html.js';
export { layeredLayout } from './graph/layout.js';
export { clusterModel } from './graph/clusters.js';
export type { ClusterGroup, ClusterOptions, ClusterUnit } from './graph/clusters.js';
export type { LayoutResult } from './graph/layout.js';
export { renderReportHtml, ATTEMPT_COLORS } from './report/html.js';
export type { ReportAttempt, ReportData, ReportOutcome, ReportStep } from './report/model.js';
export type { StoredStep } from './store-scan.js';
export type { CliContext } from './context.js';
