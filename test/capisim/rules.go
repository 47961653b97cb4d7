package capisim

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// rulesReconciler reads the fault rules ConfigMap whenever it changes, so
// that a test outside the process (the Python end-to-end tests) can arrange
// failures, even for Clusters that do not exist yet.
type rulesReconciler struct{ *Simulator }

func (r *rulesReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.NamespacedName != r.opts.RulesConfigMap {
		return ctrl.Result{}, nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.faults.setConfigMapRules(nil)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	rules, err := ParseRules(cm.Data[RulesConfigMapKey])
	if err != nil {
		// A broken rule set is the test author's mistake: keep the last
		// good rules and say why in the log.
		r.log.Error(err, "ignoring the fault rules ConfigMap", "configMap", req.NamespacedName.String())
		return ctrl.Result{}, nil
	}
	r.faults.setConfigMapRules(rules)
	return ctrl.Result{}, nil
}
