/**
 * The smallest valid Fleet the end-to-end tests create: one port, one container. `template`
 * adds labels to the GameServers' template and fields to their spec (e.g. `health`), and may
 * replace the pod's containers.
 */
export function fleetManifest(
  name: string,
  replicas: number,
  template: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    spec?: Record<string, unknown>;
    containers?: Array<{ name: string; image: string; env?: Array<{ name: string; value: string }> }>;
    /** Fields of the pod template's spec besides its containers (terminationGracePeriodSeconds, restartPolicy…). */
    podSpec?: Record<string, unknown>;
  } = {},
) {
  const metadata = { ...(template.labels && { labels: template.labels }), ...(template.annotations && { annotations: template.annotations }) };
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name },
    spec: {
      replicas,
      template: {
        ...(Object.keys(metadata).length > 0 && { metadata }),
        spec: {
          ports: [{ name: 'default', containerPort: 7654 }],
          ...template.spec,
          template: { spec: { ...template.podSpec, containers: template.containers ?? [{ name: 'game', image: 'game:1' }] } },
        },
      },
    },
  };
}

/**
 * The same smallest Fleet as YAML text, for tests that send YAML (kubectl files, `application/yaml`
 * bodies). The last line sits in the pod template's spec, so a caller may append fields there
 * indented by ten spaces.
 */
export function fleetYaml(name: string, replicas: number, options: { namespace?: string; labels?: Record<string, string> } = {}): string {
  const metadata = options.namespace ? `{name: ${name}, namespace: ${options.namespace}}` : `{name: ${name}}`;
  const labels = options.labels && Object.entries(options.labels).map(([key, value]) => `${key}: ${value}`).join(', ');
  return [
    'apiVersion: agones.dev/v1',
    'kind: Fleet',
    `metadata: ${metadata}`,
    'spec:',
    `  replicas: ${replicas}`,
    '  template:',
    ...(labels ? [`    metadata: {labels: {${labels}}}`] : []),
    '    spec:',
    '      ports: [{name: default, containerPort: 7654}]',
    '      template:',
    '        spec:',
    '          containers: [{name: game, image: game:1}]',
  ].join('\n');
}
