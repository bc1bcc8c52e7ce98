package scenarios

// Catalogue is the explicit list of every scenario, family by family.
func Catalogue() []Scenario {
	var all []Scenario
	for _, family := range [][]Scenario{
		tlsScenarios(),
		authorityScenarios(),
		discoveryScenarios(),
		watchScenarios(),
		registrationScenarios(),
		quicScenarios(),
		invocationScenarios(),
		resilienceScenarios(),
		resilienceTLSScenarios(),
		rotationScenarios(),
	} {
		all = append(all, family...)
	}
	return all
}

// ByID returns the scenario with id from the catalogue.
func ByID(id string) (Scenario, bool) {
	for _, s := range Catalogue() {
		if s.ID == id {
			return s, true
		}
	}
	return Scenario{}, false
}
