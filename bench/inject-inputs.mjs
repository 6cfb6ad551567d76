// The inputs of the inject benchmark: one ConfigMap whose data map holds `megabytes` of keys beside one Deployment
// (the shape of a namespace dump with a big object in it), and `count` Deployments of about 1 KB each (a cluster dump).

const DEPLOYMENT = (index) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${index}
  namespace: shop
  labels:
    app: web-${index}
    tier: frontend
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web-${index}
  template:
    metadata:
      labels:
        app: web-${index}
        tier: frontend
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"
    spec:
      containers:
      - name: app
        image: registry.example.com/shop/web:1.${index % 100}.0
        ports:
        - containerPort: 8080
          name: http
        env:
        - name: LOG_LEVEL
          value: info
        - name: CACHE_SIZE
          value: "256"
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
        livenessProbe:
          httpGet:
            path: /live
            port: 8080
          periodSeconds: 10
        readinessProbe:
          httpGet:
            path: /ready
            port: http
          periodSeconds: 5
        startupProbe:
          tcpSocket:
            port: 8080
          failureThreshold: 30
`;

/** `count` Deployments, one YAML stream. */
export function deployments(count) {
  const docs = [];
  for (let i = 0; i < count; i++) docs.push(DEPLOYMENT(i));
  return docs.join('---\n');
}

/** One ConfigMap of about `megabytes` MB in one map (`data`: 100-byte lines), then a Deployment. */
export function bigMap(megabytes) {
  const lines = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: big',
    '  namespace: shop',
    'data:',
  ];
  const value = 'x'.repeat(79);
  const keys = Math.round((megabytes * 1024 * 1024) / 100);
  for (let i = 0; i < keys; i++) lines.push(`  key-${String(i).padStart(12, '0')}: ${value}`);
  return `${lines.join('\n')}\n---\n${DEPLOYMENT(0)}`;
}
