import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';

/**
 * The official conformance suite's plain tool fixtures (`tools-call-*`, `json-schema-2020-12`, the
 * header and stateless scenarios), as durable task tools that never become tasks: they exercise the
 * inline path, result pass-through, progress, schema listing and the `Mcp-Param-*` check.
 */

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** A 1x1 red PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** 8 samples of silence as a mono 8 kHz 16-bit WAV. */
const WAV = (() => {
  const samples = 8;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24);
  wav.writeUInt32LE(16000, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36);
  wav.writeUInt32LE(samples * 2, 40);
  return wav.toString('base64');
})();

const none = z.object({});

// First in the list on purpose: the header scenario calls the first listed tool with `{}`.
const simpleText = defineTaskTool({
  name: 'test_simple_text',
  description: 'Returns one text block.',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => text('This is a simple text response for testing.'),
});

const imageContent = defineTaskTool({
  name: 'test_image_content',
  description: 'Returns a 1x1 PNG.',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
});

const audioContent = defineTaskTool({
  name: 'test_audio_content',
  description: 'Returns a short silent WAV.',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
});

const embeddedResource = defineTaskTool({
  name: 'test_embedded_resource',
  description: 'Returns an embedded text resource.',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
});

const mixedContent = defineTaskTool({
  name: 'test_multiple_content_types',
  description: 'Returns text, an image and an embedded resource.',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }),
});

const errorHandling = defineTaskTool({
  name: 'test_error_handling',
  description: 'Throws: the call answers a tool error (isError: true).',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async () => {
    throw new Error('This tool intentionally returns an error for testing');
  },
});

const withProgress = defineTaskTool({
  name: 'test_tool_with_progress',
  description: 'Reports progress 0, 50 and 100 of 100, 50 ms apart.',
  inputSchema: none,
  taskSupport: 'optional',
  pollIntervalMs: 200,
  handler: async (_args, ctx) => {
    for (const done of [0, 50, 100]) {
      if (done > 0) await sleep(50, undefined, { signal: ctx.signal });
      await ctx.progress(done, 100);
    }
    return text('Progress test completed');
  },
});

const withLog = defineTaskTool({
  name: 'test_logging_tool',
  description: 'Writes task log lines (never a notifications/message: the server has no logging capability).',
  inputSchema: none,
  taskSupport: 'forbidden',
  handler: async (_args, ctx) => {
    await ctx.log('Tool execution started');
    await ctx.log('Tool execution completed');
    return text('Logging test completed');
  },
});

const address = z
  .object({ street: z.string().optional(), city: z.string().optional() })
  .meta({ id: 'address', $anchor: 'addressDef' });

const jsonSchema202012 = defineTaskTool({
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  inputSchema: z
    .object({
      name: z.string().optional(),
      address: address.optional(),
      contactMethod: z.enum(['phone', 'email']).optional(),
      phone: z.string().optional(),
      email: z.string().optional(),
    })
    .strict()
    .meta({
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
    }),
  taskSupport: 'forbidden',
  handler: async (args) => text(`Received: ${JSON.stringify(args)}`),
});

const headerParam = defineTaskTool({
  name: 'test_header_param',
  description: 'Its `region` is mirrored in the Mcp-Param-Region header (SEP-2243).',
  inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
  taskSupport: 'forbidden',
  handler: async ({ region }) => text(`region ${region}`),
});

export const contentTools = [
  simpleText,
  imageContent,
  audioContent,
  embeddedResource,
  mixedContent,
  errorHandling,
  withProgress,
  withLog,
  jsonSchema202012,
  headerParam,
] as const;
