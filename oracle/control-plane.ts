import { join } from 'node:path';
import { API_PORT, CONTROL_IP, SERVICE_CIDR, type OraclePaths } from './paths.js';

/** The command lines of etcd, kube-apiserver and kube-controller-manager, all in the control namespace. */

export function etcdCommand(paths: OraclePaths): [string, string[]] {
  return [
    'etcd',
    [
      '--name=oracle',
      `--data-dir=${paths.etcd}`,
      '--listen-client-urls=http://127.0.0.1:2379',
      '--advertise-client-urls=http://127.0.0.1:2379',
      '--listen-peer-urls=http://127.0.0.1:2380',
      '--initial-advertise-peer-urls=http://127.0.0.1:2380',
      '--initial-cluster=oracle=http://127.0.0.1:2380',
      // The run is thrown away at `down`: no need to pay for fsync on a shared disk.
      '--unsafe-no-fsync',
      '--quota-backend-bytes=8589934592',
      '--log-level=warn',
    ],
  ];
}

export function apiServerCommand(paths: OraclePaths): [string, string[]] {
  const pki = (name: string) => join(paths.pki, name);
  return [
    join(paths.kubeBin, 'kube-apiserver'),
    [
      '--etcd-servers=http://127.0.0.1:2379',
      `--advertise-address=${CONTROL_IP}`,
      '--bind-address=0.0.0.0',
      `--secure-port=${API_PORT}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      `--kubelet-client-certificate=${pki('admin.crt')}`,
      `--kubelet-client-key=${pki('admin.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      '--authorization-mode=Node,RBAC',
      '--allow-privileged=true',
      // The aggregated allocation API and the webhooks are reached at their endpoints' addresses (there is no kube-proxy in the kernel).
      '--enable-aggregator-routing=true',
      `--requestheader-client-ca-file=${pki('front-proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-username-headers=X-Remote-User',
      `--proxy-client-cert-file=${pki('front-proxy-client.crt')}`,
      `--proxy-client-key-file=${pki('front-proxy-client.key')}`,
      '--profiling=false',
      '--v=1',
    ],
  ];
}

export function controllerManagerCommand(paths: OraclePaths): [string, string[]] {
  const pki = (name: string) => join(paths.pki, name);
  const kubeconfig = pki('controller-manager.kubeconfig');
  return [
    join(paths.kubeBin, 'kube-controller-manager'),
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki('sa.key')}`,
      `--root-ca-file=${pki('ca.crt')}`,
      `--cluster-signing-cert-file=${pki('ca.crt')}`,
      `--cluster-signing-key-file=${pki('ca.key')}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--profiling=false',
      '--v=1',
    ],
  ];
}
