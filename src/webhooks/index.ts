// The webhooks feature's door: what the dashboard (composition) uses besides the service.
export { CreateWebhookInput } from './webhooks.schemas.js';
