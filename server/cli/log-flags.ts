import { FlagError, type FlagSpec, type FlagValues } from '../flags.js';
import { DEFAULT_LOG_SETTINGS, LOG_FORMATS, LOG_LEVELS, type LogSettings, parseLogFormat, parseLogLevel } from '../log/logger.js';

/** `--log-level` and `--log-format` of a command that logs what it does, read from `levelEnv` too. */
export function logFlags(levelEnv: string): FlagSpec[] {
  return [
    { name: 'log-level', env: levelEnv, type: 'string', default: DEFAULT_LOG_SETTINGS.level, help: `lines logged from this level up: ${LOG_LEVELS.join(', ')}` },
    {
      name: 'log-format',
      env: 'FLEETSIM_LOG_FORMAT',
      type: 'string',
      default: DEFAULT_LOG_SETTINGS.format,
      help: 'text (a line each), or json (one object per line: time, level, msg and its fields)',
    },
  ];
}

export function logSettings(values: FlagValues): LogSettings {
  const level = parseLogLevel(String(values['log-level']));
  if (!level) throw new FlagError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${String(values['log-level'])}"`);
  const format = parseLogFormat(String(values['log-format']));
  if (!format) throw new FlagError(`--log-format must be ${LOG_FORMATS.join(' or ')}, not "${String(values['log-format'])}"`);
  return { level, format };
}
