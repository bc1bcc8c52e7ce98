package scenarios

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/nvcf/conformance/deploy/manifests"
	"github.com/nvcf/conformance/faults"
	"github.com/nvcf/conformance/pki"
)

// rotationWait bounds how long a rotated Secret takes to reach the ingress:
// the kubelet's volume refresh plus the ingress's reload interval.
const rotationWait = 90 * time.Second

// goodRotationIsSeamless rotates the bootstrap ingress's certificate to a
// re-issued good one and requires every watch and invocation during the
// rotation to succeed until the new certificate is served.
func goodRotationIsSeamless(ctx context.Context, e *Env, _ Setting) error {
	return e.rotateIngress(ctx, AsControl, func(ctx context.Context, served func(context.Context) (bool, error)) error {
		// Any failure on the way ends the wait and fails the case.
		var failed error
		err := e.Eventually(ctx, "the ingress serves the re-issued certificate", rotationWait, func(ctx context.Context) error {
			if _, err := e.Probe.Watch(ctx, e.Ingress(e.Bootstrap())); err != nil {
				failed = fmt.Errorf("a watch failed during a good-to-good rotation: %w", err)
				return nil
			}
			if err := e.chatEchoed(ctx, e.Invoke(e.Bootstrap()), echoModel, "during rotation"); err != nil {
				failed = fmt.Errorf("an invocation failed during a good-to-good rotation: %w", err)
				return nil
			}
			ok, err := served(ctx)
			if err != nil {
				failed = err
				return nil
			}
			if !ok {
				return errors.New("the ingress still serves the previous certificate")
			}
			return nil
		})
		return errors.Join(err, failed)
	})
}

// watchAfterRotation rotates the bootstrap ingress's certificate to the
// wrong root's (a re-issued good one with the control's configuration),
// waits until the handshake shows the rotation, and watches through it.
func watchAfterRotation(ctx context.Context, e *Env, s Setting) error {
	return e.rotateIngress(ctx, s, func(ctx context.Context, served func(context.Context) (bool, error)) error {
		// Wait until the handshake shows the rotation: the new
		// certificate verified (control) or a refusal (faulty).
		var refusal error
		err := e.Eventually(ctx, "the rotated certificate reaches the ingress", rotationWait, func(ctx context.Context) error {
			ok, err := served(ctx)
			if err != nil {
				refusal = err
				return nil
			}
			if !ok {
				return errors.New("the ingress still serves the previous certificate")
			}
			return nil
		})
		if err != nil {
			return err
		}
		if refusal != nil {
			return refusal
		}
		_, err = e.Probe.Watch(ctx, e.Ingress(e.Bootstrap()))
		return err
	})
}

// rotateIngress rotates the bootstrap region's ingress Secret in place, to
// a re-issued good certificate (AsControl) or the wrong root's (Faulty), runs
// fn with a check that says whether the rotated certificate is served, and
// waits after the undo until the original serves again, so the next case
// finds a healthy ingress.
func (e *Env) rotateIngress(ctx context.Context, s Setting, fn func(ctx context.Context, served func(context.Context) (bool, error)) error) (err error) {
	region := e.Bootstrap()
	target := e.Ingress(region)
	before, err := e.Probe.PeerCertificate(ctx, target)
	if err != nil {
		return stepFailed("read the certificate the ingress of "+region+" serves before the rotation", err)
	}
	rot := faults.CertRotate{
		Cluster:   faults.Cluster{Kubeconfig: e.Config.Environment.Kubeconfig, Context: region},
		Namespace: e.Deployed.Namespace, Secret: manifests.IngressTLSSecret,
	}
	if s == Faulty {
		c, err := e.PKI.Credential(pki.RoleGRPC, pki.ServerWrongRoot, region)
		if err != nil {
			return err
		}
		rot.CertFile, rot.KeyFile, rot.Variant = c.CertPath, c.KeyPath, "wrong-root"
	} else {
		if rot.Cert, rot.Key, err = reissue(e.PKI, before); err != nil {
			return stepFailed("re-issue the ingress certificate of "+region, err)
		}
		rot.Variant = "good (re-issued)"
	}
	h, err := e.startFault(ctx, faults.Fault{
		Name:   "rotate ingress certificate",
		Target: faults.Target{Cluster: region, Service: e.Deployed.Namespace + "/" + manifests.IngressTLSSecret},
		Action: rot,
	})
	if err != nil {
		return err
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		if serr := h.Stop(ctx); serr != nil {
			err = withCleanup(err, "undo the certificate rotation", serr)
			return
		}
		err = withCleanup(err, "wait for the ingress to serve its original certificate", e.Eventually(ctx, "the ingress of "+region+" serves its original certificate again", rotationWait, func(ctx context.Context) error {
			c, err := e.Probe.PeerCertificate(ctx, target)
			if err != nil {
				return err
			}
			if c.SerialNumber.Cmp(before.SerialNumber) != 0 {
				return fmt.Errorf("serves serial %s, want %s", c.SerialNumber, before.SerialNumber)
			}
			return nil
		}))
	}()
	served := func(ctx context.Context) (bool, error) {
		c, err := e.Probe.PeerCertificate(ctx, target)
		if err != nil {
			return false, err
		}
		return c.SerialNumber.Cmp(before.SerialNumber) != 0, nil
	}
	return fn(ctx, served)
}

// reissue signs a new certificate for the names and usages of old with the
// environment's trusted root and a fresh key: a genuinely different, valid
// certificate for a good-to-good rotation.
func reissue(m *pki.Manifest, old *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	rootArt, err := m.Find(pki.Root, "")
	if err != nil {
		return nil, nil, err
	}
	keyArt, err := m.Companion(rootArt, pki.KindKey)
	if err != nil {
		return nil, nil, err
	}
	root, err := tls.LoadX509KeyPair(m.Path(rootArt), m.Path(keyArt))
	if err != nil {
		return nil, nil, fmt.Errorf("load the root CA: %w", err)
	}
	rootCert, err := x509.ParseCertificate(root.Certificate[0])
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: old.Subject, DNSNames: old.DNSNames, IPAddresses: old.IPAddresses,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: old.NotAfter,
		KeyUsage: old.KeyUsage, ExtKeyUsage: old.ExtKeyUsage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, rootCert, &key.PublicKey, root.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
