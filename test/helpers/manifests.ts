/**
 * The smallest valid Fleet the end-to-end tests create: one port, one container. `template`
 * adds labels to the GameServers' template and fields to their spec (e.g. `health`).
 */
export function fleetManifest(
  name: string,
  replicas: number,
  template: { labels?: Record<string, string>; spec?: Record<string, unknown> } = {},
) {
  return {
    apiVersion: 'agones.dev/v1',
    kind: 'Fleet',
    metadata: { name },
    spec: {
      replicas,
      template: {
        ...(template.labels && { metadata: { labels: template.labels } }),
        spec: {
          ports: [{ name: 'default', containerPort: 7654 }],
          ...template.spec,
          template: { spec: { containers: [{ name: 'game', image: 'game:1' }] } },
        },
      },
    },
  };
}
