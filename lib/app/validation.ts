import fp from 'fastify-plugin';
import { isValidateOnly } from '../http/internal-dispatch.ts';
import { validatorCompilerFor } from '../http/validator-compiler.ts';
import { webhookUrlRefiners } from '../webhooks/url-validation.ts';

/**
 * Requests are checked by the generated validators (with the webhook URL policy refining
 * theirs); responses are serialised as plain JSON: they are shaped by the domain layer and
 * checked against the spec in tests, and unions (detail levels, versions) make schema-driven
 * serialisation slower, not safer.
 */
export const validationPlugin = fp(
  async function validation(app) {
    app.setValidatorCompiler(validatorCompilerFor({ refiners: webhookUrlRefiners(app.config.webhooks) }));
    app.setSerializerCompiler(() => (data) => JSON.stringify(data));
    // A validate-only internal dispatch (lib/http/internal-dispatch.ts) stops once its request passed validation: the handler never runs.
    app.addHook('preHandler', async (request, reply) => {
      if (isValidateOnly(request)) return reply.code(204).send();
    });
  },
  { name: 'validation', dependencies: ['config'], fastify: '5.x' },
);
