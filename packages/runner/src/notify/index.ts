/** Notifications: types, the option check, and a run's notifier. */
export { checkNotifyOptions, checkWebhookUrl } from './check.js';
export { Notifier } from './notifier.js';
export { slackMessage } from './slack.js';
export { trackTargets } from './targets.js';
export type { CommandSink, NotifyCounts, NotifyError, NotifyEvent, NotifyEventType, NotifyOptions, NotifySink, RunEndNotice, StepFailedNotice, StepSlowNotice, WebhookSink } from './types.js';
