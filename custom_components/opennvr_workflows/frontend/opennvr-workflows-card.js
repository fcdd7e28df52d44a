var z=globalThis,I=z.ShadowRoot&&(z.ShadyCSS===void 0||z.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,F=Symbol(),ot=new WeakMap,E=class{constructor(t,e,s){if(this._$cssResult$=!0,s!==F)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=t,this.t=e}get styleSheet(){let t=this.o,e=this.t;if(I&&t===void 0){let s=e!==void 0&&e.length===1;s&&(t=ot.get(e)),t===void 0&&((this.o=t=new CSSStyleSheet).replaceSync(this.cssText),s&&ot.set(e,t))}return t}toString(){return this.cssText}},at=r=>new E(typeof r=="string"?r:r+"",void 0,F),H=(r,...t)=>{let e=r.length===1?r[0]:t.reduce((s,n,i)=>s+(o=>{if(o._$cssResult$===!0)return o.cssText;if(typeof o=="number")return o;throw Error("Value passed to 'css' function must be a 'css' function result: "+o+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(n)+r[i+1],r[0]);return new E(e,r,F)},lt=(r,t)=>{if(I)r.adoptedStyleSheets=t.map(e=>e instanceof CSSStyleSheet?e:e.styleSheet);else for(let e of t){let s=document.createElement("style"),n=z.litNonce;n!==void 0&&s.setAttribute("nonce",n),s.textContent=e.cssText,r.appendChild(s)}},K=I?r=>r:r=>r instanceof CSSStyleSheet?(t=>{let e="";for(let s of t.cssRules)e+=s.cssText;return at(e)})(r):r;var{is:Et,defineProperty:Ht,getOwnPropertyDescriptor:Ct,getOwnPropertyNames:Pt,getOwnPropertySymbols:Tt,getPrototypeOf:Rt}=Object,q=globalThis,ct=q.trustedTypes,Mt=ct?ct.emptyScript:"",Ut=q.reactiveElementPolyfillSupport,C=(r,t)=>r,J={toAttribute(r,t){switch(t){case Boolean:r=r?Mt:null;break;case Object:case Array:r=r==null?r:JSON.stringify(r)}return r},fromAttribute(r,t){let e=r;switch(t){case Boolean:e=r!==null;break;case Number:e=r===null?null:Number(r);break;case Object:case Array:try{e=JSON.parse(r)}catch{e=null}}return e}},dt=(r,t)=>!Et(r,t),ut={attribute:!0,type:String,converter:J,reflect:!1,useDefault:!1,hasChanged:dt};Symbol.metadata??=Symbol("metadata"),q.litPropertyMetadata??=new WeakMap;var $=class extends HTMLElement{static addInitializer(t){this._$Ei(),(this.l??=[]).push(t)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(t,e=ut){if(e.state&&(e.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(t)&&((e=Object.create(e)).wrapped=!0),this.elementProperties.set(t,e),!e.noAccessor){let s=Symbol(),n=this.getPropertyDescriptor(t,s,e);n!==void 0&&Ht(this.prototype,t,n)}}static getPropertyDescriptor(t,e,s){let{get:n,set:i}=Ct(this.prototype,t)??{get(){return this[e]},set(o){this[e]=o}};return{get:n,set(o){let u=n?.call(this);i?.call(this,o),this.requestUpdate(t,u,s)},configurable:!0,enumerable:!0}}static getPropertyOptions(t){return this.elementProperties.get(t)??ut}static _$Ei(){if(this.hasOwnProperty(C("elementProperties")))return;let t=Rt(this);t.finalize(),t.l!==void 0&&(this.l=[...t.l]),this.elementProperties=new Map(t.elementProperties)}static finalize(){if(this.hasOwnProperty(C("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(C("properties"))){let e=this.properties,s=[...Pt(e),...Tt(e)];for(let n of s)this.createProperty(n,e[n])}let t=this[Symbol.metadata];if(t!==null){let e=litPropertyMetadata.get(t);if(e!==void 0)for(let[s,n]of e)this.elementProperties.set(s,n)}this._$Eh=new Map;for(let[e,s]of this.elementProperties){let n=this._$Eu(e,s);n!==void 0&&this._$Eh.set(n,e)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(t){let e=[];if(Array.isArray(t)){let s=new Set(t.flat(1/0).reverse());for(let n of s)e.unshift(K(n))}else t!==void 0&&e.push(K(t));return e}static _$Eu(t,e){let s=e.attribute;return s===!1?void 0:typeof s=="string"?s:typeof t=="string"?t.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(t=>this.enableUpdating=t),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(t=>t(this))}addController(t){(this._$EO??=new Set).add(t),this.renderRoot!==void 0&&this.isConnected&&t.hostConnected?.()}removeController(t){this._$EO?.delete(t)}_$E_(){let t=new Map,e=this.constructor.elementProperties;for(let s of e.keys())this.hasOwnProperty(s)&&(t.set(s,this[s]),delete this[s]);t.size>0&&(this._$Ep=t)}createRenderRoot(){let t=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return lt(t,this.constructor.elementStyles),t}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(t=>t.hostConnected?.())}enableUpdating(t){}disconnectedCallback(){this._$EO?.forEach(t=>t.hostDisconnected?.())}attributeChangedCallback(t,e,s){this._$AK(t,s)}_$ET(t,e){let s=this.constructor.elementProperties.get(t),n=this.constructor._$Eu(t,s);if(n!==void 0&&s.reflect===!0){let i=(s.converter?.toAttribute!==void 0?s.converter:J).toAttribute(e,s.type);this._$Em=t,i==null?this.removeAttribute(n):this.setAttribute(n,i),this._$Em=null}}_$AK(t,e){let s=this.constructor,n=s._$Eh.get(t);if(n!==void 0&&this._$Em!==n){let i=s.getPropertyOptions(n),o=typeof i.converter=="function"?{fromAttribute:i.converter}:i.converter?.fromAttribute!==void 0?i.converter:J;this._$Em=n;let u=o.fromAttribute(e,i.type);this[n]=u??this._$Ej?.get(n)??u,this._$Em=null}}requestUpdate(t,e,s,n=!1,i){if(t!==void 0){let o=this.constructor;if(n===!1&&(i=this[t]),s??=o.getPropertyOptions(t),!((s.hasChanged??dt)(i,e)||s.useDefault&&s.reflect&&i===this._$Ej?.get(t)&&!this.hasAttribute(o._$Eu(t,s))))return;this.C(t,e,s)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(t,e,{useDefault:s,reflect:n,wrapped:i},o){s&&!(this._$Ej??=new Map).has(t)&&(this._$Ej.set(t,o??e??this[t]),i!==!0||o!==void 0)||(this._$AL.has(t)||(this.hasUpdated||s||(e=void 0),this._$AL.set(t,e)),n===!0&&this._$Em!==t&&(this._$Eq??=new Set).add(t))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(e){Promise.reject(e)}let t=this.scheduleUpdate();return t!=null&&await t,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[n,i]of this._$Ep)this[n]=i;this._$Ep=void 0}let s=this.constructor.elementProperties;if(s.size>0)for(let[n,i]of s){let{wrapped:o}=i,u=this[n];o!==!0||this._$AL.has(n)||u===void 0||this.C(n,void 0,i,u)}}let t=!1,e=this._$AL;try{t=this.shouldUpdate(e),t?(this.willUpdate(e),this._$EO?.forEach(s=>s.hostUpdate?.()),this.update(e)):this._$EM()}catch(s){throw t=!1,this._$EM(),s}t&&this._$AE(e)}willUpdate(t){}_$AE(t){this._$EO?.forEach(e=>e.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(t)),this.updated(t)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(t){return!0}update(t){this._$Eq&&=this._$Eq.forEach(e=>this._$ET(e,this[e])),this._$EM()}updated(t){}firstUpdated(t){}};$.elementStyles=[],$.shadowRootOptions={mode:"open"},$[C("elementProperties")]=new Map,$[C("finalized")]=new Map,Ut?.({ReactiveElement:$}),(q.reactiveElementVersions??=[]).push("2.1.2");var et=globalThis,ht=r=>r,B=et.trustedTypes,pt=B?B.createPolicy("lit-html",{createHTML:r=>r}):void 0,bt="$lit$",y=`lit$${Math.random().toFixed(9).slice(2)}$`,yt="?"+y,Nt=`<${yt}>`,A=document,T=()=>A.createComment(""),R=r=>r===null||typeof r!="object"&&typeof r!="function",rt=Array.isArray,Ot=r=>rt(r)||typeof r?.[Symbol.iterator]=="function",Z=`[ 	
\f\r]`,P=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,gt=/-->/g,mt=/>/g,v=RegExp(`>|${Z}(?:([^\\s"'>=/]+)(${Z}*=${Z}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),ft=/'/g,_t=/"/g,vt=/^(?:script|style|textarea|title)$/i,st=r=>(t,...e)=>({_$litType$:r,strings:t,values:e}),p=st(1),Ft=st(2),Kt=st(3),x=Symbol.for("lit-noChange"),c=Symbol.for("lit-nothing"),$t=new WeakMap,w=A.createTreeWalker(A,129);function wt(r,t){if(!rt(r)||!r.hasOwnProperty("raw"))throw Error("invalid template strings array");return pt!==void 0?pt.createHTML(t):t}var jt=(r,t)=>{let e=r.length-1,s=[],n,i=t===2?"<svg>":t===3?"<math>":"",o=P;for(let u=0;u<e;u++){let a=r[u],d,h,l=-1,_=0;for(;_<a.length&&(o.lastIndex=_,h=o.exec(a),h!==null);)_=o.lastIndex,o===P?h[1]==="!--"?o=gt:h[1]!==void 0?o=mt:h[2]!==void 0?(vt.test(h[2])&&(n=RegExp("</"+h[2],"g")),o=v):h[3]!==void 0&&(o=v):o===v?h[0]===">"?(o=n??P,l=-1):h[1]===void 0?l=-2:(l=o.lastIndex-h[2].length,d=h[1],o=h[3]===void 0?v:h[3]==='"'?_t:ft):o===_t||o===ft?o=v:o===gt||o===mt?o=P:(o=v,n=void 0);let b=o===v&&r[u+1].startsWith("/>")?" ":"";i+=o===P?a+Nt:l>=0?(s.push(d),a.slice(0,l)+bt+a.slice(l)+y+b):a+y+(l===-2?u:b)}return[wt(r,i+(r[e]||"<?>")+(t===2?"</svg>":t===3?"</math>":"")),s]},M=class r{constructor({strings:t,_$litType$:e},s){let n;this.parts=[];let i=0,o=0,u=t.length-1,a=this.parts,[d,h]=jt(t,e);if(this.el=r.createElement(d,s),w.currentNode=this.el.content,e===2||e===3){let l=this.el.content.firstChild;l.replaceWith(...l.childNodes)}for(;(n=w.nextNode())!==null&&a.length<u;){if(n.nodeType===1){if(n.hasAttributes())for(let l of n.getAttributeNames())if(l.endsWith(bt)){let _=h[o++],b=n.getAttribute(l).split(y),L=/([.?@])?(.*)/.exec(_);a.push({type:1,index:i,name:L[2],strings:b,ctor:L[1]==="."?Q:L[1]==="?"?X:L[1]==="@"?Y:S}),n.removeAttribute(l)}else l.startsWith(y)&&(a.push({type:6,index:i}),n.removeAttribute(l));if(vt.test(n.tagName)){let l=n.textContent.split(y),_=l.length-1;if(_>0){n.textContent=B?B.emptyScript:"";for(let b=0;b<_;b++)n.append(l[b],T()),w.nextNode(),a.push({type:2,index:++i});n.append(l[_],T())}}}else if(n.nodeType===8)if(n.data===yt)a.push({type:2,index:i});else{let l=-1;for(;(l=n.data.indexOf(y,l+1))!==-1;)a.push({type:7,index:i}),l+=y.length-1}i++}}static createElement(t,e){let s=A.createElement("template");return s.innerHTML=t,s}};function k(r,t,e=r,s){if(t===x)return t;let n=s!==void 0?e._$Co?.[s]:e._$Cl,i=R(t)?void 0:t._$litDirective$;return n?.constructor!==i&&(n?._$AO?.(!1),i===void 0?n=void 0:(n=new i(r),n._$AT(r,e,s)),s!==void 0?(e._$Co??=[])[s]=n:e._$Cl=n),n!==void 0&&(t=k(r,n._$AS(r,t.values),n,s)),t}var G=class{constructor(t,e){this._$AV=[],this._$AN=void 0,this._$AD=t,this._$AM=e}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(t){let{el:{content:e},parts:s}=this._$AD,n=(t?.creationScope??A).importNode(e,!0);w.currentNode=n;let i=w.nextNode(),o=0,u=0,a=s[0];for(;a!==void 0;){if(o===a.index){let d;a.type===2?d=new U(i,i.nextSibling,this,t):a.type===1?d=new a.ctor(i,a.name,a.strings,this,t):a.type===6&&(d=new tt(i,this,t)),this._$AV.push(d),a=s[++u]}o!==a?.index&&(i=w.nextNode(),o++)}return w.currentNode=A,n}p(t){let e=0;for(let s of this._$AV)s!==void 0&&(s.strings!==void 0?(s._$AI(t,s,e),e+=s.strings.length-2):s._$AI(t[e])),e++}},U=class r{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(t,e,s,n){this.type=2,this._$AH=c,this._$AN=void 0,this._$AA=t,this._$AB=e,this._$AM=s,this.options=n,this._$Cv=n?.isConnected??!0}get parentNode(){let t=this._$AA.parentNode,e=this._$AM;return e!==void 0&&t?.nodeType===11&&(t=e.parentNode),t}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(t,e=this){t=k(this,t,e),R(t)?t===c||t==null||t===""?(this._$AH!==c&&this._$AR(),this._$AH=c):t!==this._$AH&&t!==x&&this._(t):t._$litType$!==void 0?this.$(t):t.nodeType!==void 0?this.T(t):Ot(t)?this.k(t):this._(t)}O(t){return this._$AA.parentNode.insertBefore(t,this._$AB)}T(t){this._$AH!==t&&(this._$AR(),this._$AH=this.O(t))}_(t){this._$AH!==c&&R(this._$AH)?this._$AA.nextSibling.data=t:this.T(A.createTextNode(t)),this._$AH=t}$(t){let{values:e,_$litType$:s}=t,n=typeof s=="number"?this._$AC(t):(s.el===void 0&&(s.el=M.createElement(wt(s.h,s.h[0]),this.options)),s);if(this._$AH?._$AD===n)this._$AH.p(e);else{let i=new G(n,this),o=i.u(this.options);i.p(e),this.T(o),this._$AH=i}}_$AC(t){let e=$t.get(t.strings);return e===void 0&&$t.set(t.strings,e=new M(t)),e}k(t){rt(this._$AH)||(this._$AH=[],this._$AR());let e=this._$AH,s,n=0;for(let i of t)n===e.length?e.push(s=new r(this.O(T()),this.O(T()),this,this.options)):s=e[n],s._$AI(i),n++;n<e.length&&(this._$AR(s&&s._$AB.nextSibling,n),e.length=n)}_$AR(t=this._$AA.nextSibling,e){for(this._$AP?.(!1,!0,e);t!==this._$AB;){let s=ht(t).nextSibling;ht(t).remove(),t=s}}setConnected(t){this._$AM===void 0&&(this._$Cv=t,this._$AP?.(t))}},S=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(t,e,s,n,i){this.type=1,this._$AH=c,this._$AN=void 0,this.element=t,this.name=e,this._$AM=n,this.options=i,s.length>2||s[0]!==""||s[1]!==""?(this._$AH=Array(s.length-1).fill(new String),this.strings=s):this._$AH=c}_$AI(t,e=this,s,n){let i=this.strings,o=!1;if(i===void 0)t=k(this,t,e,0),o=!R(t)||t!==this._$AH&&t!==x,o&&(this._$AH=t);else{let u=t,a,d;for(t=i[0],a=0;a<i.length-1;a++)d=k(this,u[s+a],e,a),d===x&&(d=this._$AH[a]),o||=!R(d)||d!==this._$AH[a],d===c?t=c:t!==c&&(t+=(d??"")+i[a+1]),this._$AH[a]=d}o&&!n&&this.j(t)}j(t){t===c?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,t??"")}},Q=class extends S{constructor(){super(...arguments),this.type=3}j(t){this.element[this.name]=t===c?void 0:t}},X=class extends S{constructor(){super(...arguments),this.type=4}j(t){this.element.toggleAttribute(this.name,!!t&&t!==c)}},Y=class extends S{constructor(t,e,s,n,i){super(t,e,s,n,i),this.type=5}_$AI(t,e=this){if((t=k(this,t,e,0)??c)===x)return;let s=this._$AH,n=t===c&&s!==c||t.capture!==s.capture||t.once!==s.once||t.passive!==s.passive,i=t!==c&&(s===c||n);n&&this.element.removeEventListener(this.name,this,s),i&&this.element.addEventListener(this.name,this,t),this._$AH=t}handleEvent(t){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,t):this._$AH.handleEvent(t)}},tt=class{constructor(t,e,s){this.element=t,this.type=6,this._$AN=void 0,this._$AM=e,this.options=s}get _$AU(){return this._$AM._$AU}_$AI(t){k(this,t)}};var Dt=et.litHtmlPolyfillSupport;Dt?.(M,U),(et.litHtmlVersions??=[]).push("3.3.3");var At=(r,t,e)=>{let s=e?.renderBefore??t,n=s._$litPart$;if(n===void 0){let i=e?.renderBefore??null;s._$litPart$=n=new U(t.insertBefore(T(),i),i,void 0,e??{})}return n._$AI(r),n};var nt=globalThis,f=class extends ${constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let t=super.createRenderRoot();return this.renderOptions.renderBefore??=t.firstChild,t}update(t){let e=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(t),this._$Do=At(e,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return x}};f._$litElement$=!0,f.finalized=!0,nt.litElementHydrateSupport?.({LitElement:f});var Lt=nt.litElementPolyfillSupport;Lt?.({LitElement:f});(nt.litElementVersions??=[]).push("4.2.2");var N="opennvr_workflows",m=(r,t,e={})=>r.callWS({type:`${N}/${t}`,...e}),V={list:r=>m(r,"workflows/list"),runs:(r,t,e)=>m(r,"workflows/runs",{workflow:t,...e}),run:(r,t)=>m(r,"workflows/run",{run_id:t}),versions:(r,t)=>m(r,"workflows/versions",{workflow:t}),source:(r,t)=>m(r,"workflows/source",{workflow:t}),validate:(r,t)=>m(r,"workflows/validate",{yaml:t}),templates:r=>m(r,"workflows/templates"),save:(r,t)=>m(r,"workflows/save",t),setState:(r,t,e)=>m(r,"workflows/set_state",{workflow:t,state:e}),rollback:(r,t,e)=>m(r,"workflows/rollback",{workflow:t,version:e}),tryIt:(r,t,e)=>m(r,"workflows/try",{workflow:t,count:e}),mark:(r,t,e)=>m(r,"workflows/mark",{run_id:t,right:e}),approvals:r=>m(r,"approvals/list"),answer:(r,t,e,s="panel")=>m(r,"approvals/answer",{approval_id:t,reply:e,source:s}),subscribe:(r,t)=>r.connection.subscribeMessage(t,{type:`${N}/workflows/subscribe`})};function it(r){return r&&typeof r=="object"&&"message"in r?String(r.message):String(r)}var kt={},xt="";async function O(r){if(xt===r.language)return;kt=(await r.callWS({type:"frontend/get_translations",language:r.language,category:"exceptions",integration:[N]})).resources,xt=r.language}function g(r){return kt[`component.${N}.exceptions.panel_${r}.message`]??r}var W=H`
  :host {
    display: block;
    color: var(--primary-text-color);
    font-family: var(--paper-font-body1_-_font-family, Roboto, sans-serif);
  }
  .card {
    background: var(--card-background-color, var(--ha-card-background));
    border-radius: var(--ha-card-border-radius, 12px);
    border: 1px solid var(--divider-color);
    padding: 12px 16px;
    margin: 0 0 12px;
  }
  button {
    font: inherit;
    cursor: pointer;
    border-radius: 8px;
    border: 1px solid var(--divider-color);
    background: var(--secondary-background-color);
    color: var(--primary-text-color);
    padding: 6px 12px;
    min-height: 36px;
  }
  button.primary {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
    border-color: var(--primary-color);
  }
  button[disabled] {
    opacity: 0.5;
    cursor: default;
  }
  button.on {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
  }
  .muted {
    color: var(--secondary-text-color);
  }
  .error,
  .attention {
    color: var(--error-color, #db4437);
  }
  .warning {
    color: var(--warning-color, #ffa600);
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 8px;
    align-items: center;
  }
  .grow {
    flex: 1 1 auto;
    min-width: 0;
  }
  .chip {
    display: inline-block;
    border-radius: 12px;
    padding: 2px 8px;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    border: 1px solid var(--divider-color);
  }
  .chip.test {
    border-color: var(--warning-color, #ffa600);
  }
  pre {
    white-space: pre-wrap;
    word-break: break-word;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    padding: 8px;
    border-radius: 8px;
    margin: 4px 0;
  }
  img {
    max-width: 100%;
    border-radius: 8px;
  }
  h2,
  h3 {
    margin: 8px 0;
    font-weight: 500;
  }
  select {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    min-height: 36px;
  }
  input {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    padding: 6px;
  }
`;function zt(r){return r.locale?.language||r.language||navigator.language}function St(r,t){if(!t)return"";let e={dateStyle:"medium",timeStyle:"medium"},s=r.locale?.time_format;(s==="12"||s==="24")&&(e.hour12=s==="12"),r.locale?.time_zone==="server"&&r.config?.time_zone&&(e.timeZone=r.config.time_zone);try{return new Intl.DateTimeFormat(s==="system"?void 0:zt(r),e).format(new Date(t*1e3))}catch{return new Date(t*1e3).toLocaleString()}}var j=class extends f{constructor(){super(...arguments);this.only=null;this.runHref=null;this.questionHref=null;this.source="panel";this._rows=null;this._error="";this._done=""}connectedCallback(){super.connectedCallback(),this._load(),this._unsub=V.subscribe(this.hass,e=>{(e.kind==="approvals"||e.kind.startsWith("approval_"))&&this._load()})}disconnectedCallback(){super.disconnectedCallback(),this._unsub?.then(e=>e())}async _load(){try{await O(this.hass),this._rows=(await V.approvals(this.hass)).approvals}catch(e){this._error=it(e)}}async _answer(e,s){this._error="";try{await V.answer(this.hass,e.approval_id,s,this.source),this._done=`${g("answered")}: ${s}`,await this._load()}catch(n){this._error=it(n)}}_follow(e){if(e.button!==0||e.metaKey||e.ctrlKey||e.shiftKey||e.altKey)return;let s=e.currentTarget.getAttribute("href")??"";e.preventDefault();let n=s.split("/").slice(2).join("/");this.dispatchEvent(new CustomEvent("panel-navigate",{detail:{path:`/${n}`},bubbles:!0,composed:!0}))}_runOf(e){let s=e.split(":")[0];return!s||!this.runHref?"":p`<a class="open-run" href=${this.runHref(s)} @click=${this._follow}>${g("open_run")}</a>`}render(){if(this._rows===null)return p`<div class="muted">…</div>`;let e=this.only?this._rows.filter(n=>n.approval_id===this.only):this._rows,s=this.only?g("question_closed"):g("questions_none");return p`
      ${this._error?p`<div class="error" role="alert">${this._error}</div>`:""}
      ${this._done?p`<div class="muted" role="status">${this._done}</div>`:""}
      ${e.length===0?p`<div class="muted none">${s}</div>`:""}
      ${e.length===0&&this.only&&this.runHref?this._runOf(this.only):""}
      ${e.map(n=>p`
          <div class="card approval" data-approval=${n.approval_id}>
            <div class="row muted">
              <span class="grow">${n.workflow_name}</span>
              ${this.questionHref&&!this.only?p`<a class="open-question" href=${this.questionHref(n.approval_id)} @click=${this._follow}>${g("open_question")}</a>`:c}
              ${this.runHref&&n.run_id?p`<a class="open-run" href=${this.runHref(n.run_id)} @click=${this._follow}>${g("open_run")}</a>`:c}
            </div>
            <h3>${n.message}</h3>
            ${n.picture?p`<img src=${n.picture} alt="" loading="lazy" />`:""}
            <div class="row replies">
              ${n.replies.map(i=>p`<button class="primary" ?disabled=${!n.may_answer} @click=${()=>this._answer(n,i)}>
                    ${i}
                  </button>`)}
            </div>
            ${n.may_answer?"":p`<div class="muted">${g("may_not_answer")}</div>`}
            <div class="muted">${n.asked.length?`${g("asked")}: ${n.asked.join(", ")} · `:""}${g("until")} ${St(this.hass,n.expires_at)}</div>
          </div>
        `)}
    `}};j.properties={hass:{attribute:!1},_rows:{state:!0},_error:{state:!0},_done:{state:!0},only:{attribute:!1},runHref:{attribute:!1},questionHref:{attribute:!1},source:{attribute:!1}},j.styles=[W,H`
      .replies button {
        flex: 1 1 auto;
      }
      /* A question's first lines say what each reply does; keep them on lines of their own. */
      .approval h3 {
        white-space: pre-line;
      }
    `];customElements.get("opennvr-approvals")||customElements.define("opennvr-approvals",j);var D=class extends f{constructor(){super(...arguments);this._config={};this._ready=!1}setConfig(e){this._config=e??{}}getCardSize(){return 3}static getStubConfig(){return{}}updated(){this.hass&&!this._ready&&O(this.hass).then(()=>this._ready=!0)}render(){return this.hass?p`<div class="card">
      <h2>${this._config.title??g("card_title")}</h2>
      <opennvr-approvals .hass=${this.hass} .source=${"card"}></opennvr-approvals>
    </div>`:p``}};D.properties={hass:{attribute:!1},_config:{state:!0},_ready:{state:!0}},D.styles=W;async function It(){for(let r=0;r<600;r++){let t=document.querySelector("home-assistant")?.hass;if(t)return t;await new Promise(e=>setTimeout(e,100))}return null}if(!customElements.get("opennvr-approvals-card")){customElements.define("opennvr-approvals-card",D);let r=window;r.customCards=r.customCards??[],r.customCards.push({type:"opennvr-approvals-card",get name(){return g("card_name")},get description(){return g("card_description")}}),It().then(t=>t?O(t):void 0).catch(()=>{})}
