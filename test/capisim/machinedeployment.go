package capisim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// machineDeploymentReconciler plays CAPI's MachineDeployment controller
// (and its defaulting webhook, which the test bed does not run).
type machineDeploymentReconciler struct{ *Simulator }

var gvkMachineDeployment = clusterv1.GroupVersion.WithKind("MachineDeployment")
var gvkMachineSet = clusterv1.GroupVersion.WithKind("MachineSet")

// machineDeploymentScope is what one reconcile of a MachineDeployment knows.
type machineDeploymentScope struct {
	md          *clusterv1.MachineDeployment
	cluster     *clusterv1.Cluster
	machineSets []*clusterv1.MachineSet // owned, oldest first
	newMS       *clusterv1.MachineSet   // the one matching the template, if any
	machines    []*clusterv1.Machine
}

func (r *machineDeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *machineDeploymentReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	md := &clusterv1.MachineDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, md); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := r.getCluster(ctx, md.Namespace, md.Spec.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if md.DeletionTimestamp == nil {
		if cluster == nil {
			return after(r.opts.Step), nil
		}
		if deref(cluster.Spec.Paused, false) || deref(md.Spec.Paused, false) {
			return ctrl.Result{}, nil
		}
		if changed, err := r.ensureMeta(ctx, md, func() bool { return defaultMachineDeployment(md) || adoptByCluster(md, cluster) }); err != nil || changed {
			return after(r.opts.Step / 4), err
		}
		if added, err := r.addFinalizer(ctx, md, clusterv1.MachineDeploymentFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
		if md.Generation != md.Status.ObservedGeneration {
			if d := r.pace.wait(md.UID, fmt.Sprintf("observe-%d", md.Generation)); d > 0 {
				return after(d), nil
			}
		}
	}
	s := &machineDeploymentScope{md: md, cluster: cluster}
	if err := r.load(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	original := md.DeepCopy()
	var res ctrl.Result
	if md.DeletionTimestamp != nil {
		if len(s.machineSets) == 0 {
			r.pace.forget(md.UID)
			return ctrl.Result{}, r.removeFinalizer(ctx, md, clusterv1.MachineDeploymentFinalizer)
		}
		for _, ms := range s.machineSets {
			if err := r.deleteIfPresent(ctx, ms); err != nil {
				return ctrl.Result{}, err
			}
		}
		res = after(r.opts.Step)
	} else {
		for _, ref := range []clusterv1.ContractVersionedObjectReference{md.Spec.Template.Spec.InfrastructureRef, md.Spec.Template.Spec.Bootstrap.ConfigRef} {
			if err := r.adoptTemplate(ctx, cluster, ref, md.Namespace); err != nil {
				return ctrl.Result{}, err
			}
		}
		if res, err = r.rollout(ctx, s); err != nil {
			return res, err
		}
	}
	r.updateStatus(s)
	if !equality.Semantic.DeepEqual(original.Status, md.Status) {
		if err := r.patchStatus(ctx, md, original); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// defaultMachineDeployment does what CAPI's MachineDeployment defaulting
// webhook does: the cluster-name label, replicas (from the autoscaler
// annotations when unset), the rollout strategy, selector and template
// labels, and the "v" of the version. It reports whether it changed md.
func defaultMachineDeployment(md *clusterv1.MachineDeployment) bool {
	before := md.DeepCopy()
	if md.Labels == nil {
		md.Labels = map[string]string{}
	}
	md.Labels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	if md.Spec.Replicas == nil {
		md.Spec.Replicas = ptrTo(defaultReplicas(md))
	}
	if md.Spec.Selector.MatchLabels == nil {
		md.Spec.Selector.MatchLabels = map[string]string{}
	}
	if md.Spec.Rollout.Strategy.Type == "" {
		md.Spec.Rollout.Strategy.Type = clusterv1.RollingUpdateMachineDeploymentStrategyType
	}
	if md.Spec.Template.Labels == nil {
		md.Spec.Template.Labels = map[string]string{}
	}
	if md.Spec.Rollout.Strategy.Type == clusterv1.RollingUpdateMachineDeploymentStrategyType {
		ru := &md.Spec.Rollout.Strategy.RollingUpdate
		if ru.MaxSurge == nil {
			ru.MaxSurge = ptrTo(intstr.FromInt32(1))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptrTo(intstr.FromInt32(0))
		}
	}
	if len(md.Spec.Selector.MatchLabels) == 0 && len(md.Spec.Selector.MatchExpressions) == 0 {
		md.Spec.Selector.MatchLabels[clusterv1.MachineDeploymentNameLabel] = format.MustFormatValue(md.Name)
		md.Spec.Template.Labels[clusterv1.MachineDeploymentNameLabel] = format.MustFormatValue(md.Name)
	}
	md.Spec.Selector.MatchLabels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	md.Spec.Template.Labels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	if v := md.Spec.Template.Spec.Version; v != "" && !strings.HasPrefix(v, "v") {
		md.Spec.Template.Spec.Version = "v" + v
	}
	return !equality.Semantic.DeepEqual(before.ObjectMeta, md.ObjectMeta) || !equality.Semantic.DeepEqual(before.Spec, md.Spec)
}

// defaultReplicas is the webhook's replica count for a MachineDeployment
// without one: the autoscaler's min size for a new one, or the current
// count brought into [min, max]; 1 without autoscaler annotations.
func defaultReplicas(md *clusterv1.MachineDeployment) int32 {
	minS, okMin := md.Annotations[clusterv1.AutoscalerMinSizeAnnotation]
	maxS, okMax := md.Annotations[clusterv1.AutoscalerMaxSizeAnnotation]
	if !okMin || !okMax {
		return 1
	}
	minN, err1 := strconv.ParseInt(minS, 10, 32)
	maxN, err2 := strconv.ParseInt(maxS, 10, 32)
	if err1 != nil || err2 != nil {
		return 1
	}
	// The webhook compares with the previous object's replicas; the
	// simulator sees only the stored object, whose status tells how many
	// replicas it had.
	if md.Status.Replicas == nil {
		return int32(minN)
	}
	current := int64(*md.Status.Replicas)
	switch {
	case current < minN:
		return int32(minN)
	case current > maxN:
		return int32(maxN)
	}
	return int32(current)
}

// adoptByCluster makes the Cluster an owner of md, as the MachineDeployment
// controller does.
func adoptByCluster(obj client.Object, cluster *clusterv1.Cluster) bool {
	refs, changed := withOwnerRef(obj.GetOwnerReferences(), ownerRefTo(cluster, gvkCluster, false))
	obj.SetOwnerReferences(refs)
	return changed
}

// load lists the MachineSets the MachineDeployment controls and its Machines.
func (r *machineDeploymentReconciler) load(ctx context.Context, s *machineDeploymentScope) error {
	md := s.md
	list := &clusterv1.MachineSetList{}
	if err := r.client.List(ctx, list, client.InNamespace(md.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: md.Spec.ClusterName}); err != nil {
		return err
	}
	for i := range list.Items {
		ms := &list.Items[i]
		if c := metav1.GetControllerOf(ms); c != nil && c.UID == md.UID {
			s.machineSets = append(s.machineSets, ms)
		}
	}
	sortMachineSetsOldestFirst(s.machineSets)
	for _, ms := range s.machineSets {
		if ms.DeletionTimestamp == nil && len(templateOutdated(&ms.Spec.Template, &md.Spec.Template)) == 0 {
			s.newMS = ms
		}
	}
	machines := &clusterv1.MachineList{}
	if err := r.client.List(ctx, machines, client.InNamespace(md.Namespace), client.MatchingLabels{
		clusterv1.ClusterNameLabel: md.Spec.ClusterName, clusterv1.MachineDeploymentNameLabel: format.MustFormatValue(md.Name),
	}); err != nil {
		return err
	}
	for i := range machines.Items {
		s.machines = append(s.machines, &machines.Items[i])
	}
	return nil
}

// templateOutdated returns why Machines made from current differ from
// desired (nothing when they do not), in CAPI's words.
func templateOutdated(current, desired *clusterv1.MachineTemplateSpec) []string {
	var why []string
	if current.Spec.Version != desired.Spec.Version {
		why = append(why, fmt.Sprintf("Version %s, %s required", current.Spec.Version, desired.Spec.Version))
	}
	if current.Spec.Bootstrap.ConfigRef != desired.Spec.Bootstrap.ConfigRef {
		why = append(why, fmt.Sprintf("%s is not up-to-date", strings.TrimSuffix(current.Spec.Bootstrap.ConfigRef.Kind, clusterv1.TemplateSuffix)))
	}
	if !ptrEq(current.Spec.Bootstrap.DataSecretName, desired.Spec.Bootstrap.DataSecretName) {
		why = append(why, fmt.Sprintf("spec.bootstrap.dataSecretName %s, %s required",
			deref(current.Spec.Bootstrap.DataSecretName, "nil"), deref(desired.Spec.Bootstrap.DataSecretName, "nil")))
	}
	if current.Spec.InfrastructureRef != desired.Spec.InfrastructureRef {
		why = append(why, fmt.Sprintf("%s is not up-to-date", strings.TrimSuffix(current.Spec.InfrastructureRef.Kind, clusterv1.TemplateSuffix)))
	}
	if current.Spec.FailureDomain != desired.Spec.FailureDomain {
		why = append(why, fmt.Sprintf("Failure domain %s, %s required", current.Spec.FailureDomain, desired.Spec.FailureDomain))
	}
	return why
}

// rollout takes at most one step towards the desired MachineSets: create
// the MachineSet for a new template, scale it up within maxSurge, scale the
// old ones down within maxUnavailable, delete the emptied old ones.
func (r *machineDeploymentReconciler) rollout(ctx context.Context, s *machineDeploymentScope) (ctrl.Result, error) {
	md := s.md
	if !r.machineSetsSettled(md, s.machineSets) {
		return after(r.opts.Step / 4), nil
	}
	desired := deref(md.Spec.Replicas, 1)
	surge, unavailable := rolloutLimits(md, desired)
	var old []*clusterv1.MachineSet
	var oldSpec, allSpec, allAvailable int32
	for _, ms := range s.machineSets {
		if ms.DeletionTimestamp != nil {
			continue
		}
		allSpec += deref(ms.Spec.Replicas, 0)
		allAvailable += deref(ms.Status.AvailableReplicas, 0)
		if ms != s.newMS {
			old = append(old, ms)
			oldSpec += deref(ms.Spec.Replicas, 0)
		}
	}

	var act func() error
	switch {
	case s.newMS == nil:
		replicas := desired
		if oldSpec > 0 {
			replicas = min(desired, max(0, desired+surge-allSpec))
		}
		act = func() error { return r.createMachineSet(ctx, s, replicas, oldSpec > 0) }
	case deref(s.newMS.Spec.Replicas, 0) < desired && desired+surge-allSpec > 0:
		add := min(desired+surge-allSpec, desired-deref(s.newMS.Spec.Replicas, 0))
		act = func() error { return r.scaleMachineSet(ctx, s.newMS, deref(s.newMS.Spec.Replicas, 0)+add) }
	case oldSpec == 0 && deref(s.newMS.Spec.Replicas, 0) > desired:
		act = func() error { return r.scaleMachineSet(ctx, s.newMS, desired) }
	case oldSpec > 0:
		ms, to, ok := scaleDownOld(old, desired, unavailable, allSpec, allAvailable, s.newMS)
		if !ok {
			break
		}
		act = func() error { return r.scaleMachineSet(ctx, ms, to) }
	}
	if act == nil {
		for _, ms := range old {
			if deref(ms.Spec.Replicas, 0) == 0 && deref(ms.Status.Replicas, 0) == 0 && ms.Generation == ms.Status.ObservedGeneration {
				act = func() error { return r.deleteIfPresent(ctx, ms) }
				break
			}
		}
	}
	if act == nil {
		if oldSpec > 0 || len(old) > 0 {
			return after(r.opts.Step), nil
		}
		return ctrl.Result{}, nil
	}
	if d := r.pace.wait(md.UID, "rollout"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(md.UID, "rollout")
	return after(r.opts.Step), act()
}

// rolloutLimits resolves maxSurge and maxUnavailable against the desired
// replicas, as Kubernetes Deployments do (surge rounds up, unavailable
// down, and both cannot be zero).
func rolloutLimits(md *clusterv1.MachineDeployment, desired int32) (int32, int32) {
	ru := md.Spec.Rollout.Strategy.RollingUpdate
	surge, unavailable := int32(1), int32(0)
	if ru.MaxSurge != nil {
		if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, int(desired), true); err == nil {
			surge = int32(v)
		}
	}
	if ru.MaxUnavailable != nil {
		if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(desired), false); err == nil {
			unavailable = int32(v)
		}
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable
}

// scaleDownOld picks the old MachineSet to scale down and to how many, as
// a Deployment's rolling update does: first replicas that are not
// available, then available ones while enough stay available.
func scaleDownOld(old []*clusterv1.MachineSet, desired, unavailable, allSpec, allAvailable int32, newMS *clusterv1.MachineSet) (*clusterv1.MachineSet, int32, bool) {
	minAvailable := desired - unavailable
	newUnavailable := deref(newMS.Spec.Replicas, 0) - deref(newMS.Status.AvailableReplicas, 0)
	if allSpec-minAvailable-newUnavailable <= 0 {
		return nil, 0, false
	}
	for _, ms := range old {
		spec := deref(ms.Spec.Replicas, 0)
		if unhealthy := spec - deref(ms.Status.AvailableReplicas, 0); spec > 0 && unhealthy > 0 {
			return ms, spec - min(unhealthy, allSpec-minAvailable-newUnavailable), true
		}
	}
	canRemove := allAvailable - minAvailable
	for _, ms := range old {
		spec := deref(ms.Spec.Replicas, 0)
		if spec > 0 && canRemove > 0 {
			return ms, spec - min(spec, canRemove), true
		}
	}
	return nil, 0, false
}

func (r *machineDeploymentReconciler) createMachineSet(ctx context.Context, s *machineDeploymentScope, replicas int32, replacement bool) error {
	md := s.md
	hash := templateHash(&md.Spec.Template)
	labels := map[string]string{}
	for k, v := range md.Spec.Template.Labels {
		labels[k] = v
	}
	labels[clusterv1.ClusterNameLabel] = md.Spec.ClusterName
	labels[clusterv1.MachineDeploymentNameLabel] = format.MustFormatValue(md.Name)
	labels[clusterv1.MachineDeploymentUniqueLabel] = hash
	selector := md.Spec.Selector.DeepCopy()
	if selector.MatchLabels == nil {
		selector.MatchLabels = map[string]string{}
	}
	selector.MatchLabels[clusterv1.MachineDeploymentUniqueLabel] = hash
	template := *md.Spec.Template.DeepCopy()
	template.Labels = labels
	annotations := map[string]string{
		clusterv1.RevisionAnnotation:        strconv.Itoa(len(s.machineSets) + 1),
		clusterv1.DesiredReplicasAnnotation: strconv.Itoa(int(deref(md.Spec.Replicas, 1))),
	}
	if replacement {
		annotations[annotationReplacement] = "true"
	}
	ms := &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: md.Namespace, Name: generateName(md.Name), Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRefTo(md, gvkMachineDeployment, true)},
		},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: md.Spec.ClusterName,
			Replicas:    ptrTo(replicas),
			Selector:    *selector,
			Template:    template,
			Deletion:    clusterv1.MachineSetDeletionSpec{Order: md.Spec.Deletion.Order},
		},
	}
	if err := r.client.Create(ctx, ms); err != nil {
		return err
	}
	r.expect.expectCreated(md.UID, ms.Name)
	return nil
}

func (r *machineDeploymentReconciler) scaleMachineSet(ctx context.Context, ms *clusterv1.MachineSet, replicas int32) error {
	original := ms.DeepCopy()
	ms.Spec.Replicas = ptrTo(replicas)
	return r.client.Patch(ctx, ms, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}))
}

// machineSetsSettled reports whether the cache shows the MachineSets the
// MachineDeployment created lately.
func (r *machineDeploymentReconciler) machineSetsSettled(md *clusterv1.MachineDeployment, sets []*clusterv1.MachineSet) bool {
	byName := map[string]*clusterv1.MachineSet{}
	for _, ms := range sets {
		byName[ms.Name] = ms
	}
	return r.expect.satisfied(md.UID, func(name string) (bool, bool) {
		ms, ok := byName[name]
		return ok, ok && ms.DeletionTimestamp != nil
	})
}

// templateHash is the machine-template-hash label of a MachineSet.
func templateHash(t *clusterv1.MachineTemplateSpec) string {
	h := shortHash(t.Spec.Version, t.Spec.Bootstrap.ConfigRef.Name, t.Spec.InfrastructureRef.Name, t.Spec.FailureDomain, deref(t.Spec.Bootstrap.DataSecretName, ""))
	// CAPI's machine-template-hash values are decimal numbers; so are these.
	n, err := strconv.ParseUint(h[:8], 16, 64)
	if err != nil {
		return h
	}
	return strconv.FormatUint(n, 10)
}
