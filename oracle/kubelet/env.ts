import { type Api } from '../api.js';
import { API_PORT, CONTROL_IP } from '../paths.js';
import { fieldValue } from './downward.js';
import { type Container, type Pod } from './pod.js';

/**
 * A container's environment as the kubelet builds it: the API server's address (given as the
 * control namespace's address, not the `kubernetes` Service's cluster IP, so the components' API
 * traffic takes no user-space hop), envFrom, then env in order with `$(NAME)` references to the
 * names before it expanded.
 */
export async function containerEnv(api: Api, pod: Pod, container: Container, addresses: { podIP: string; hostIP: string }): Promise<Record<string, string>> {
  const namespace = pod.metadata.namespace ?? 'default';
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: pod.spec.hostname ?? pod.metadata.name,
    HOME: '/root',
    KUBERNETES_SERVICE_HOST: CONTROL_IP,
    KUBERNETES_SERVICE_PORT: String(API_PORT),
    KUBERNETES_SERVICE_PORT_HTTPS: String(API_PORT),
    KUBERNETES_PORT: `tcp://${CONTROL_IP}:${API_PORT}`,
  };
  const data = async (plural: 'secrets' | 'configmaps', name: string, optional: boolean | undefined): Promise<Record<string, string>> => {
    const found = await api.find<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/${plural}/${name}`);
    if (!found) {
      if (optional) return {};
      throw new Error(`${plural === 'secrets' ? 'secret' : 'configmap'} "${name}" not found`);
    }
    const values = found.data ?? {};
    return plural === 'secrets' ? Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()])) : values;
  };
  for (const from of container.envFrom ?? []) {
    const values = from.configMapRef ? await data('configmaps', from.configMapRef.name, from.configMapRef.optional) : from.secretRef ? await data('secrets', from.secretRef.name, from.secretRef.optional) : {};
    for (const [key, value] of Object.entries(values)) env[`${from.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const source = variable.valueFrom;
    if (source?.fieldRef) env[variable.name] = fieldValue(pod, source.fieldRef.fieldPath, addresses);
    else if (source?.secretKeyRef) {
      const value = (await data('secrets', source.secretKeyRef.name, source.secretKeyRef.optional))[source.secretKeyRef.key];
      if (value === undefined && !source.secretKeyRef.optional) throw new Error(`couldn't find key ${source.secretKeyRef.key} in Secret ${namespace}/${source.secretKeyRef.name}`);
      if (value !== undefined) env[variable.name] = value;
    } else if (source?.configMapKeyRef) {
      const value = (await data('configmaps', source.configMapKeyRef.name, source.configMapKeyRef.optional))[source.configMapKeyRef.key];
      if (value === undefined && !source.configMapKeyRef.optional) throw new Error(`couldn't find key ${source.configMapKeyRef.key} in ConfigMap ${namespace}/${source.configMapKeyRef.name}`);
      if (value !== undefined) env[variable.name] = value;
    } else if (source?.resourceFieldRef) env[variable.name] = '0';
    else env[variable.name] = expand(variable.value ?? '', env);
  }
  return env;
}

/** `$(NAME)` becomes NAME's value when NAME is defined, `$$(NAME)` the text `$(NAME)`; the rest stays. */
export function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && Object.hasOwn(env, name) ? env[name]! : match;
  });
}
